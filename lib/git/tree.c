/*
 * The reviewed tree: its file list (working tree + index, the index alone,
 * or the target commit's tree) and the post-change bytes of any of its files.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "diff/diff_internal.h"
#include "fs/fs.h"
#include "git/git_internal.h"
#include "git/index_file.h"

/* ---- working-tree files ----------------------------------------------- */

static int io_error(int err, const char *path)
{
    if (err == ENOENT || err == ENOTDIR)
        return agti_error(AGT_ENOTFOUND, "'%s' does not exist in the working tree", path);
    return agti_error(AGT_EIO, "cannot read '%s': %s", path, strerror(err));
}

/* Reads the link `name` (relative to dirfd, or AT_FDCWD with a full path). */
static int read_link(int dirfd, const char *name, const char *path, size_t size, char **out,
                     size_t *out_len)
{
    size_t cap = size + 1;
    for (;;) {
        char *buf = malloc(cap + 1);
        if (!buf)
            return agti_oom();
        ssize_t n = readlinkat(dirfd, name, buf, cap);
        if (n < 0) {
            int err = errno;
            free(buf);
            return io_error(err, path);
        }
        if ((size_t)n < cap) {
            buf[n] = '\0';
            *out = buf;
            *out_len = (size_t)n;
            return AGT_OK;
        }
        free(buf); /* the link grew between lstat and readlink */
        if (cap > ((size_t)1 << 20))
            return agti_error(AGT_EIO, "cannot read the link '%s': target too long", path);
        cap *= 2;
    }
}

/* Reads a regular file in one read() when its size is what fstat said (a
 * short read at that size is its end); a file that grows meanwhile is
 * read on to its end, within max. */
static int read_fd(int fd, const char *path, size_t max, char **out, size_t *out_len,
                   size_t *out_size, struct stat *st_out)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return io_error(errno, path);
    if (st_out != NULL)
        *st_out = st;
    if (!S_ISREG(st.st_mode))
        return agti_error(AGT_ENOTFOUND, "'%s' is not a regular file", path);
    size_t size = (size_t)st.st_size;
    if (size > max) {
        *out_size = size;
        return agti_error(AGT_ELIMIT, "'%s' has %zu bytes, more than the limit of %zu", path, size,
                          max);
    }
    size_t cap = size + 2; /* one byte past the expected end, and the NUL */
    char *buf = malloc(cap);
    if (!buf)
        return agti_oom();
    size_t len = 0;
    for (;;) {
        if (len + 1 >= cap) { /* full: it grew while we read (len <= max) */
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                return agti_oom();
            }
            buf = nb;
            cap *= 2;
        }
        size_t want = cap - 1 - len;
        ssize_t n = read(fd, buf + len, want);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int err = errno;
            free(buf);
            return io_error(err, path);
        }
        if (n == 0)
            break;
        len += (size_t)n;
        if (len > max) {
            *out_size = len;
            free(buf);
            return agti_error(AGT_ELIMIT, "'%s' has more than %zu bytes", path, max);
        }
        if (len == size && (size_t)n < want)
            break;
    }
    buf[len] = '\0';
    *out_len = len;
    *out = buf;
    return AGT_OK;
}

/* Opens path below a working tree: relative to wfd when it is open, else by
 * the full path workdir + path, built in scratch. -2: out of memory. */
static int open_below(int wfd, const char *workdir, const char *path, agti_buf *scratch, int flags)
{
    /* No symbolic link is followed on the way either: a tracked folder
     * replaced by a link (conf -> .aws) must not make conf/credentials
     * read .aws/credentials, which no name check would see. */
    if (wfd >= 0)
        return strchr(path, '/') == NULL ? openat(wfd, path, flags | O_NOFOLLOW)
                                         : agti_fs_open_beneath(wfd, path, flags);
    agti_buf_truncate(scratch, 0);
    agti_buf_puts(scratch, workdir);
    agti_buf_puts(scratch, path);
    if (scratch->oom)
        return -2;
    return open(agti_buf_cstr(scratch), flags);
}

int agti_changes_open_workdir(const agt_changes *c, const char *path, agti_buf *scratch, int flags)
{
    return open_below(c->workdir_fd, c->workdir, path, scratch, flags);
}

int agti_workdir_read(int wfd, const char *workdir, const char *path, size_t max, char **out,
                      size_t *out_len, size_t *out_size, struct stat *st_out)
{
    *out_size = 0;
    if (st_out != NULL)
        memset(st_out, 0, sizeof *st_out);
    agti_buf full = AGTI_BUF_INIT;
    int rc;
    /* Opened without an lstat first (a search reads thousands of files and
     * the second path walk was ~15% of its CPU time): a symbolic link fails
     * with ELOOP and is read as its target's name; O_NONBLOCK keeps a FIFO
     * from blocking and O_NOCTTY a terminal from becoming ours; read_fd
     * reads only a regular file. (A device node where a tracked file was
     * takes root to make.) */
    int fd = open_below(wfd, workdir, path, &full,
                        O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd == -2) {
        rc = agti_oom();
    } else if (fd >= 0) {
        rc = read_fd(fd, path, max, out, out_len, out_size, st_out);
        close(fd);
    } else {
        int err = errno;
        struct stat st;
        if (err == ELOOP && wfd >= 0 && fstatat(wfd, path, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
            S_ISLNK(st.st_mode))
            rc = read_link(wfd, path, path, (size_t)st.st_size, out, out_len);
        else if (err == ELOOP && wfd < 0 && lstat(agti_buf_cstr(&full), &st) == 0 &&
                 S_ISLNK(st.st_mode))
            rc = read_link(AT_FDCWD, agti_buf_cstr(&full), path, (size_t)st.st_size, out, out_len);
        else if (err == ELOOP || err == EXDEV)
            rc = agti_error(AGT_ENOTFOUND,
                            "'%s' is reached through a symbolic link in the working tree", path);
        else
            rc = io_error(err, path);
    }
    agti_buf_free(&full);
    return rc;
}

int agti_changes_read_workdir(const agt_changes *c, const char *path, size_t max, char **out,
                              size_t *out_len, size_t *out_size)
{
    *out_size = 0;
    if (!c->workdir)
        return agti_error(AGT_ESTATE, "the repository has no working tree");
    return agti_workdir_read(c->workdir_fd, c->workdir, path, max, out, out_len, out_size, NULL);
}

const char *agti_changes_workdir(const agt_changes *c)
{
    return c->workdir;
}

/* ---- file list -------------------------------------------------------- */

typedef struct path_list {
    char **v;
    size_t n, cap;
    git_oid *ids; /* tree walk: the blob id of each path, in step with v */
} path_list;

static int list_push(path_list *l, const char *path)
{
    if (agti_grow(&l->v, &l->cap, l->n, sizeof *l->v, 256) != AGT_OK)
        return AGT_ENOMEM;
    l->v[l->n] = agti_strdup(path);
    if (!l->v[l->n])
        return agti_oom();
    l->n++;
    return AGT_OK;
}

/* Like list_push, with the path's blob id kept beside it. */
static int list_push_id(path_list *l, const char *path, const git_oid *id, size_t *idcap)
{
    if (*idcap <= l->n) {
        size_t cap = *idcap ? *idcap * 2 : 256;
        git_oid *ids = realloc(l->ids, cap * sizeof(git_oid));
        if (!ids)
            return agti_oom();
        l->ids = ids;
        *idcap = cap;
    }
    l->ids[l->n] = *id;
    return list_push(l, path);
}

static void list_free(path_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    free(l->ids);
}

static int cmp_path(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Whether a tracked path is still a file (or a symlink) in the working
 * tree. An ordinary entry is there unless the working-tree diff reported
 * it deleted; an entry that diff does not look at on disk, or may not
 * report (assume-unchanged, skip-worktree, intent-to-add, a conflict's
 * stages), is looked up. */
static bool present(const agt_changes *c, const git_index_entry *e)
{
    bool unseen = (e->flags & GIT_INDEX_ENTRY_VALID) != 0 ||
                  (e->flags_extended &
                   (GIT_INDEX_ENTRY_SKIP_WORKTREE | GIT_INDEX_ENTRY_INTENT_TO_ADD)) != 0 ||
                  GIT_INDEX_ENTRY_STAGE(e) != 0;
    if (!unseen)
        return c->nabsent == 0 ||
               !bsearch(&e->path, c->absent, c->nabsent, sizeof(char *), cmp_path);
    struct stat st;
    if (c->workdir_fd >= 0)
        return fstatat(c->workdir_fd, e->path, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
               !S_ISDIR(st.st_mode);
    char *full = agti_aprintf("%s%s", c->workdir, e->path);
    bool ok = full && lstat(full, &st) == 0 && !S_ISDIR(st.st_mode);
    free(full);
    return ok;
}

/* Index entries; for the working tree only those still present there. */
static int list_index(agt_changes *c, path_list *l, bool present_only)
{
    size_t n = git_index_entrycount(c->index);
    int rc = AGT_OK;
    for (size_t i = 0; rc == AGT_OK && i < n; i++) {
        const git_index_entry *e = git_index_get_byindex(c->index, i);
        if (!e || e->mode == GIT_FILEMODE_COMMIT)
            continue;
        if (present_only && !present(c, e))
            continue;
        rc = list_push(l, e->path);
    }
    return rc;
}

/* Untracked non-ignored files: the added files of the change set that are
 * not in the index. */
static int list_untracked(agt_changes *c, path_list *l)
{
    size_t n = agt_diff_file_count(c->diff);
    for (size_t i = 0; i < n; i++) {
        if (agt_diff_file_status(c->diff, i) != AGT_DIFF_ADDED)
            continue;
        const char *p = agt_diff_file_new_path(c->diff, i);
        if (git_index_get_bypath(c->index, p, 0))
            continue;
        int rc = list_push(l, p);
        if (rc != AGT_OK)
            return rc;
    }
    return AGT_OK;
}

typedef struct walk_ctx {
    path_list *l;
    int rc;
    agti_buf path;
    size_t idcap;
} walk_ctx;

static int walk_cb(const char *root, const git_tree_entry *e, void *payload)
{
    walk_ctx *w = payload;
    git_filemode_t m = git_tree_entry_filemode(e);
    if (m != GIT_FILEMODE_BLOB && m != GIT_FILEMODE_BLOB_EXECUTABLE && m != GIT_FILEMODE_LINK)
        return 0;
    agti_buf_truncate(&w->path, 0);
    agti_buf_puts(&w->path, root);
    agti_buf_puts(&w->path, git_tree_entry_name(e));
    if (w->path.oom) {
        w->rc = agti_oom();
        return -1;
    }
    w->rc = list_push_id(w->l, agti_buf_cstr(&w->path), git_tree_entry_id(e), &w->idcap);
    return w->rc == AGT_OK ? 0 : -1;
}

static int list_tree(agt_changes *c, path_list *l)
{
    walk_ctx w = {l, AGT_OK, AGTI_BUF_INIT, 0};
    int grc = git_tree_walk(c->target_tree, GIT_TREEWALK_PRE, walk_cb, &w);
    agti_buf_free(&w.path);
    if (w.rc != AGT_OK)
        return w.rc;
    if (grc < 0)
        return agti_git_error(AGT_EGIT, "cannot walk the reviewed tree");
    return AGT_OK;
}

typedef struct path_id {
    char *path;
    git_oid id;
} path_id;

static int cmp_path_id(const void *a, const void *b)
{
    return strcmp(((const path_id *)a)->path, ((const path_id *)b)->path);
}

/* Sorts the paths of a tree walk by name, their ids along with them (a
 * tree walk visits "a.b" before "a/", which sorts after it). */
static int sort_with_ids(path_list *l)
{
    if (l->n < 2)
        return AGT_OK;
    path_id *t = malloc(l->n * sizeof *t);
    if (!t)
        return agti_oom();
    for (size_t i = 0; i < l->n; i++) {
        t[i].path = l->v[i];
        t[i].id = l->ids[i];
    }
    qsort(t, l->n, sizeof *t, cmp_path_id);
    for (size_t i = 0; i < l->n; i++) {
        l->v[i] = t[i].path;
        l->ids[i] = t[i].id;
    }
    free(t);
    return AGT_OK;
}

int agti_changes_files(agt_changes *c, const char *const **out_paths, size_t *out_n)
{
    if (!c->files_built) {
        path_list l = {NULL, 0, 0, NULL};
        int rc;
        if (c->source == AGTI_SOURCE_WORKTREE) {
            rc = list_index(c, &l, true);
            if (rc == AGT_OK)
                rc = list_untracked(c, &l);
        } else if (c->source == AGTI_SOURCE_INDEX) {
            rc = list_index(c, &l, false);
        } else {
            rc = list_tree(c, &l);
        }
        if (rc != AGT_OK) {
            list_free(&l);
            return rc;
        }
        /* the index and a tree walk's sorted output are in order already
         * (a check is n compares; the sort of 13,400 paths was 2 ms) */
        bool sorted = true;
        for (size_t i = 1; sorted && i < l.n; i++)
            sorted = strcmp(l.v[i - 1], l.v[i]) <= 0;
        if (!sorted && l.ids != NULL) {
            rc = sort_with_ids(&l);
            if (rc != AGT_OK) {
                list_free(&l);
                return rc;
            }
        } else if (!sorted) {
            qsort(l.v, l.n, sizeof(char *), cmp_path);
        }
        size_t k = 0; /* conflicted entries appear once per stage */
        for (size_t i = 0; i < l.n; i++) {
            if (k > 0 && strcmp(l.v[k - 1], l.v[i]) == 0) {
                free(l.v[i]);
            } else {
                if (l.ids != NULL)
                    l.ids[k] = l.ids[i];
                l.v[k++] = l.v[i];
            }
        }
        c->files = l.v;
        c->file_ids = l.ids;
        c->nfiles = k;
        c->files_built = true;
    }
    *out_paths = (const char *const *)c->files;
    *out_n = c->nfiles;
    return AGT_OK;
}

void agti_git_index_list_free(agti_git_index_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->paths[i]);
    free(l->paths);
    free(l->workdir);
    if (l->wfd >= 0)
        close(l->wfd);
    memset(l, 0, sizeof *l);
    l->wfd = -1;
}

/* The index list read without libgit2 (lib/git/index_file.c), when
 * repo_path is the top of a working tree with a .git folder: no library
 * to load, and none of libgit2's checksum, per-entry copies and path map
 * (20 ms of a 13,400-entry index). False when that does not apply or the
 * index does not parse: libgit2 reads it then. */
static bool index_list_direct(const char *repo_path, agti_git_index_list *l)
{
    char *top = realpath(repo_path, NULL);
    if (top == NULL)
        return false;
    const char *sep = top[strlen(top) - 1] == '/' ? "" : "/";
    char *gitdir = agti_aprintf("%s%s.git", top, sep);
    char *ipath = gitdir ? agti_aprintf("%s/index", gitdir) : NULL;
    struct stat st;
    agti_index_file f;
    bool ok = ipath != NULL && lstat(gitdir, &st) == 0 && S_ISDIR(st.st_mode) &&
              agti_index_file_read(ipath, (size_t)1 << 30, &f) == AGT_OK;
    free(gitdir);
    free(ipath);
    if (!ok) {
        free(top);
        return false;
    }
    path_list pl = {NULL, 0, 0, NULL};
    for (size_t i = 0; ok && i < f.n; i++) {
        const agti_index_entry *e = &f.e[i];
        if (e->mode == 0160000)
            continue; /* a submodule */
        if (pl.n > 0 && strcmp(pl.v[pl.n - 1], e->path) == 0)
            continue; /* a conflict's further stage */
        ok = list_push(&pl, e->path) == AGT_OK;
    }
    agti_index_file_free(&f);
    l->paths = pl.v;
    l->n = pl.n;
    l->workdir = ok ? agti_aprintf("%s%s", top, sep) : NULL;
    free(top);
    if (l->workdir == NULL) {
        agti_git_index_list_free(l);
        return false;
    }
    l->wfd = open(l->workdir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    return true;
}

int agti_git_index_list_read(const char *repo_path, agti_git_index_list *l)
{
    memset(l, 0, sizeof *l);
    l->wfd = -1;
    if (index_list_direct(repo_path, l))
        return AGT_OK;
    int rc = agti_git_ensure();
    if (rc != AGT_OK)
        return rc;
    git_repository *repo = NULL;
    git_index *idx = NULL;
    if (git_repository_open_ext(&repo, repo_path, 0, NULL) < 0)
        return agti_git_error(AGT_ENOTFOUND, "cannot open the git repository at '%s'", repo_path);
    const char *wd = git_repository_workdir(repo);
    if (wd == NULL) {
        git_repository_free(repo);
        return agti_error(AGT_ESTATE, "the repository has no working tree");
    }
    size_t wn = strlen(wd);
    l->workdir = agti_aprintf("%s%s", wd, wn && wd[wn - 1] == '/' ? "" : "/");
    if (l->workdir == NULL) {
        git_repository_free(repo);
        return agti_oom();
    }
    l->wfd = open(l->workdir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (git_repository_index(&idx, repo) < 0) {
        rc = agti_git_error(AGT_EGIT, "cannot read the index of '%s'", repo_path);
    } else {
        path_list pl = {NULL, 0, 0, NULL};
        size_t n = git_index_entrycount(idx);
        for (size_t i = 0; rc == AGT_OK && i < n; i++) {
            const git_index_entry *e = git_index_get_byindex(idx, i);
            if (!e || e->mode == GIT_FILEMODE_COMMIT)
                continue;
            if (pl.n > 0 && strcmp(pl.v[pl.n - 1], e->path) == 0)
                continue; /* a conflict's further stage */
            rc = list_push(&pl, e->path);
        }
        /* no sort: the index keeps its entries in byte order, which is
         * strcmp's, as callers' look-ups need (a path a look-up missed would
         * only be searched again later) */
        l->paths = pl.v;
        l->n = pl.n;
        if (rc != AGT_OK)
            agti_git_index_list_free(l);
    }
    git_index_free(idx);
    git_repository_free(repo);
    return rc;
}

int agt_changes_list_files(agt_changes *c, char **out_json)
{
    if (!c || !out_json)
        return agti_error(AGT_EINVAL, "agt_changes_list_files: %s is NULL", !c ? "c" : "out_json");
    const char *const *paths;
    size_t n;
    int rc = agti_changes_files(c, &paths, &n);
    if (rc != AGT_OK)
        return rc;
    agti_buf b = AGTI_BUF_INIT;
    agti_buf_putc(&b, '[');
    for (size_t i = 0; i < n; i++) {
        if (i)
            agti_buf_putc(&b, ',');
        agti_diff_json_string(&b, paths[i], strlen(paths[i]));
    }
    agti_buf_putc(&b, ']');
    char *s = agti_buf_detach(&b);
    if (!s)
        return agti_oom();
    *out_json = s;
    return AGT_OK;
}

/* ---- reading one file ------------------------------------------------- */

/* The repository-relative form of a path as given, or NULL when it cannot
 * name a file of the tree ("..", empty components, outside the workdir). */
static const char *relative_path(const agt_changes *c, const char *path)
{
    if (path[0] == '/') {
        size_t n = c->workdir ? strlen(c->workdir) : 0;
        if (!n || strncmp(path, c->workdir, n) != 0)
            return NULL;
        path += n;
    }
    while (path[0] == '.' && path[1] == '/')
        path += 2;
    if (!path[0])
        return NULL;
    for (const char *p = path; *p;) {
        const char *slash = strchr(p, '/');
        size_t len = slash ? (size_t)(slash - p) : strlen(p);
        if (len == 0 || (len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.'))
            return NULL;
        if (!slash)
            break;
        p = slash + 1;
        if (!*p)
            return NULL;
    }
    return path;
}

static int not_in_tree(const char *path)
{
    return agti_error(AGT_ENOTFOUND, "'%s' is not a file of the reviewed tree", path);
}

static int blob_bytes(agt_changes *c, const git_oid *id, const char *path, char **out,
                      size_t *out_len)
{
    git_blob *blob = NULL;
    if (git_blob_lookup(&blob, c->repo, id) < 0)
        return agti_git_error(AGT_EGIT, "cannot read the blob of '%s'", path);
    git_object_size_t size = git_blob_rawsize(blob);
    int rc = AGT_OK;
    if (size > AGTI_GIT_READ_MAX) {
        rc = agti_error(AGT_ELIMIT, "'%s' has %llu bytes, more than the limit of %zu", path,
                        (unsigned long long)size, AGTI_GIT_READ_MAX);
    } else {
        char *s = malloc((size_t)size + 1);
        if (!s) {
            rc = agti_oom();
        } else {
            memcpy(s, git_blob_rawcontent(blob), (size_t)size); /* NUL bytes too */
            s[size] = '\0';
            *out = s;
            *out_len = (size_t)size;
        }
    }
    git_blob_free(blob);
    return rc;
}

static int read_worktree(agt_changes *c, const char *rel, char **out, size_t *out_len)
{
    const char *const *paths;
    size_t n;
    int rc = agti_changes_files(c, &paths, &n);
    if (rc != AGT_OK)
        return rc;
    if (!bsearch(&rel, paths, n, sizeof(char *), cmp_path))
        return not_in_tree(rel);
    size_t size;
    return agti_changes_read_workdir(c, rel, AGTI_GIT_READ_MAX, out, out_len, &size);
}

static int read_index(agt_changes *c, const char *rel, char **out, size_t *out_len)
{
    const git_index_entry *e = git_index_get_bypath(c->index, rel, 0);
    if (!e || e->mode == GIT_FILEMODE_COMMIT)
        return not_in_tree(rel);
    return blob_bytes(c, &e->id, rel, out, out_len);
}

/* The blob at rel in tree (the target's, or the base's: which names it). */
static int read_tree_at(agt_changes *c, git_tree *tree, const char *which, const char *rel,
                        char **out, size_t *out_len)
{
    if (tree == NULL)
        return not_in_tree(rel);
    git_tree_entry *e = NULL;
    int grc = git_tree_entry_bypath(&e, tree, rel);
    if (grc == GIT_ENOTFOUND)
        return not_in_tree(rel);
    if (grc < 0)
        return agti_git_error(AGT_EGIT, "cannot look up '%s' in the %s tree", rel, which);
    int rc;
    if (git_tree_entry_type(e) != GIT_OBJECT_BLOB)
        rc = not_in_tree(rel);
    else
        rc = blob_bytes(c, git_tree_entry_id(e), rel, out, out_len);
    git_tree_entry_free(e);
    return rc;
}

static int read_tree(agt_changes *c, const char *rel, char **out, size_t *out_len)
{
    return read_tree_at(c, c->target_tree, "reviewed", rel, out, out_len);
}

int agti_changes_read_base(agt_changes *c, const char *path, char **out, size_t *out_len)
{
    return read_tree_at(c, c->base_tree, "base", path, out, out_len);
}

int agt_changes_read_file(agt_changes *c, const char *path, char **out_text, size_t *out_len)
{
    if (!c || !path || !out_text)
        return agti_error(AGT_EINVAL, "agt_changes_read_file: %s is NULL",
                          !c      ? "c"
                          : !path ? "path"
                                  : "out_text");
    if (!path[0])
        return agti_error(AGT_EINVAL, "agt_changes_read_file: path is empty");
    const char *rel = relative_path(c, path);
    if (!rel)
        return not_in_tree(path);
    size_t len = 0;
    char *text = NULL;
    int rc;
    if (c->source == AGTI_SOURCE_WORKTREE)
        rc = read_worktree(c, rel, &text, &len);
    else if (c->source == AGTI_SOURCE_INDEX)
        rc = read_index(c, rel, &text, &len);
    else
        rc = read_tree(c, rel, &text, &len);
    if (rc != AGT_OK)
        return rc;
    *out_text = text;
    if (out_len)
        *out_len = len;
    return AGT_OK;
}
