/*
 * The workspace scan: the paths of the working tree that the index-to-
 * working-tree diff can report, found the way git status finds them (the
 * stat data of each tracked file against the index's, a listing of each
 * folder that holds tracked files), so that libgit2 diffs only those
 * paths. libgit2's own diff of the whole tree lists every folder, stats
 * every entry by its full path and probes each folder for a .gitignore:
 * 60 ms of a 13,400-file tree, on the first review call's critical path.
 *
 * What the list holds, and why the diff limited to it reports what the
 * whole diff would:
 *  - a tracked file whose stat data differs from the index entry's in any
 *    field git or libgit2 compares (times to the nanosecond, size, inode,
 *    device, owner, mode), that is gone or no longer a file or a link, or
 *    that git cannot trust by its stat data (written in the index file's
 *    second or after: "racily clean"); every submodule, conflicted,
 *    intent-to-add, skip-worktree or assume-valid entry. A file left out
 *    has the very stat data git hashed it with, before the index was
 *    written: libgit2 calls it unmodified without reading it;
 *  - every name in a listed folder that is not tracked: a file, a link, or
 *    an untracked folder, whose files libgit2 then walks itself, applying
 *    the ignore rules (the scan applies none: an ignored path in the list
 *    is left out by libgit2 as in the whole diff);
 *  - a tracked folder that cannot be opened as one (gone, now a file or a
 *    link): the folder's path and all its entries.
 * The scan gives up (AGT_EUNSUPPORTED: the caller diffs the whole tree)
 * where libgit2's walk works differently: core.ignorecase, a .git inside
 * a tracked folder, folders nested past SCAN_MAX_DEPTH, or a list longer
 * than half the index (the whole diff is then as cheap).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "git/git_internal.h"

#define SCAN_MAX_DEPTH 90 /* libgit2's own walk stops at 100 */
#define SCAN_DENTS ((size_t)32 << 10)

typedef struct scan_ctx {
    git_index *idx;
    int64_t index_mtime; /* seconds: an entry written then or later is racy */
    agti_scan_list *out;
    size_t max;    /* list entries at most */
    agti_buf path; /* the folder being scanned, ending in '/' (empty: the root) */
    unsigned depth;
    char *dents; /* SCAN_DENTS bytes for getdents64 */
    int rc;
} scan_ctx;

void agti_scan_list_free(agti_scan_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    memset(l, 0, sizeof *l);
}

static void push(scan_ctx *x, const char *a, size_t alen, const char *b, size_t blen)
{
    if (x->rc != AGT_OK)
        return;
    size_t last = x->out->n ? strlen(x->out->v[x->out->n - 1]) : 0;
    if (last == alen + blen && memcmp(x->out->v[x->out->n - 1], a, alen) == 0 &&
        memcmp(x->out->v[x->out->n - 1] + alen, b, blen) == 0)
        return; /* a conflict's further stage */
    if (x->out->n >= x->max) {
        x->rc = AGT_EUNSUPPORTED;
        return;
    }
    if (agti_grow(&x->out->v, &x->out->cap, x->out->n, sizeof *x->out->v, 64) != AGT_OK) {
        x->rc = AGT_ENOMEM;
        return;
    }
    char *s = malloc(alen + blen + 1);
    if (s == NULL) {
        x->rc = agti_oom();
        return;
    }
    memcpy(s, a, alen);
    memcpy(s + alen, b, blen);
    s[alen + blen] = '\0';
    x->out->v[x->out->n++] = s;
}

static void push_path(scan_ctx *x, const char *p)
{
    push(x, p, strlen(p), "", 0);
}

/* Whether a tracked file's stat data vouches that it is as the index has
 * it: every field compared as the index stores it (32 bits). */
static bool clean(const scan_ctx *x, const git_index_entry *e, const struct stat *st)
{
    bool link = e->mode == GIT_FILEMODE_LINK;
    if (link ? !S_ISLNK(st->st_mode) : !S_ISREG(st->st_mode))
        return false;
    if (!link && (e->mode == GIT_FILEMODE_BLOB_EXECUTABLE) != ((st->st_mode & 0100) != 0))
        return false;
    return e->file_size == (uint32_t)st->st_size &&
           e->mtime.seconds == (int32_t)st->st_mtim.tv_sec &&
           e->mtime.nanoseconds == (uint32_t)st->st_mtim.tv_nsec &&
           e->ctime.seconds == (int32_t)st->st_ctim.tv_sec &&
           e->ctime.nanoseconds == (uint32_t)st->st_ctim.tv_nsec &&
           e->ino == (uint32_t)st->st_ino && e->dev == (uint32_t)st->st_dev &&
           e->uid == (uint32_t)st->st_uid && e->gid == (uint32_t)st->st_gid &&
           (int64_t)e->mtime.seconds < x->index_mtime;
}

static void check_entry(scan_ctx *x, int dfd, const char *name, const git_index_entry *e)
{
    struct stat st;
    bool plain =
        e->mode != GIT_FILEMODE_COMMIT && GIT_INDEX_ENTRY_STAGE(e) == 0 &&
        (e->flags & GIT_INDEX_ENTRY_VALID) == 0 &&
        (e->flags_extended & (GIT_INDEX_ENTRY_INTENT_TO_ADD | GIT_INDEX_ENTRY_SKIP_WORKTREE)) == 0;
    if (!plain || fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !clean(x, e, &st))
        push_path(x, e->path);
}

typedef struct listing {
    agti_buf names; /* NUL-separated */
    size_t *off;
    bool *known;
    size_t n, cap;
} listing;

static const char *name_at(const listing *l, size_t i)
{
    return l->names.ptr + l->off[i];
}

static int cmp_off(const void *a, const void *b, void *arg)
{
    const char *base = arg;
    return strcmp(base + *(const size_t *)a, base + *(const size_t *)b);
}

/* The folder's names, read with getdents64 into one buffer (no DIR
 * stream: readdir's fcntl and allocation per folder were a tenth of the
 * scan), sorted for the look-ups. buf is the scan's one buffer: a listing
 * is read whole before the scan goes into a subfolder. */
static int list_dir(int fd, char *buf, size_t size, listing *l)
{
    for (;;) {
        ssize_t got = getdents64(fd, buf, size);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return AGT_EUNSUPPORTED; /* a listing cut short vouches for nothing */
        if (got == 0)
            break;
        for (ssize_t at = 0; at < got;) {
            const struct dirent64 *de = (const struct dirent64 *)(const void *)(buf + at);
            at += de->d_reclen;
            if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                continue;
            if (agti_grow(&l->off, &l->cap, l->n, sizeof *l->off, 32) != AGT_OK)
                return AGT_ENOMEM;
            l->off[l->n++] = l->names.len;
            agti_buf_put(&l->names, de->d_name, strlen(de->d_name) + 1);
        }
    }
    if (l->names.oom)
        return agti_oom();
    l->known = l->n ? calloc(l->n, sizeof *l->known) : NULL;
    if (l->n && l->known == NULL)
        return agti_oom();
    if (l->n > 1)
        qsort_r(l->off, l->n, sizeof *l->off, cmp_off, l->names.ptr);
    return AGT_OK;
}

static void mark(listing *l, const char *name)
{
    size_t lo = 0, hi = l->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(name_at(l, mid), name);
        if (c == 0) {
            l->known[mid] = true;
            return;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
}

/* Scans the folder x->path (opened as dfd, which is closed here) holding
 * the index entries lo..hi-1, all of them below it. */
static void scan_dir(scan_ctx *x, int dfd, size_t lo, size_t hi)
{
    listing l;
    memset(&l, 0, sizeof l);
    int rc = list_dir(dfd, x->dents, SCAN_DENTS, &l);
    if (rc != AGT_OK)
        x->rc = rc;
    size_t plen = x->path.len;
    for (size_t i = lo; x->rc == AGT_OK && i < hi;) {
        const git_index_entry *e = git_index_get_byindex(x->idx, i);
        if (e == NULL) {
            x->rc = AGT_EUNSUPPORTED;
            break;
        }
        const char *rest = e->path + plen;
        const char *slash = strchr(rest, '/');
        if (slash == NULL) {
            mark(&l, rest);
            check_entry(x, dfd, rest, e);
            i++;
            continue;
        }
        /* a folder: its entries follow in a run (the index is sorted) */
        size_t nlen = (size_t)(slash - rest), j = i + 1;
        for (; j < hi; j++) {
            const git_index_entry *f = git_index_get_byindex(x->idx, j);
            if (f == NULL || strncmp(f->path + plen, rest, nlen + 1) != 0)
                break;
        }
        agti_buf_put(&x->path, rest, nlen);
        agti_buf_putc(&x->path, '/');
        if (x->path.oom) {
            x->rc = agti_oom();
            break;
        }
        const char *name = x->path.ptr + plen; /* "name/" */
        x->path.ptr[plen + nlen] = '\0';
        mark(&l, name);
        int cfd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        x->path.ptr[plen + nlen] = '/';
        if (cfd < 0) {
            /* gone, or a file or a link now: the folder and all it held */
            push(x, x->path.ptr, plen + nlen, "", 0);
            for (size_t k = i; k < j; k++)
                push_path(x, git_index_get_byindex(x->idx, k)->path);
        } else if (x->depth >= SCAN_MAX_DEPTH) {
            close(cfd);
            x->rc = AGT_EUNSUPPORTED;
        } else {
            x->depth++;
            scan_dir(x, cfd, i, j);
            x->depth--;
        }
        agti_buf_truncate(&x->path, plen);
        i = j;
    }
    for (size_t k = 0; x->rc == AGT_OK && k < l.n; k++) {
        if (l.known[k])
            continue;
        const char *name = name_at(&l, k);
        if (strcmp(name, ".git") == 0) {
            if (plen == 0)
                continue;             /* the repository itself */
            x->rc = AGT_EUNSUPPORTED; /* a repository in a tracked folder */
            break;
        }
        push(x, x->path.ptr ? x->path.ptr : "", plen, name, strlen(name));
    }
    free(l.off);
    free(l.known);
    agti_buf_free(&l.names);
    close(dfd);
}

static bool ignorecase(git_repository *repo)
{
    git_config *cfg = NULL;
    if (git_repository_config_snapshot(&cfg, repo) < 0)
        return true; /* unknown: as if set */
    git_buf v = {NULL, 0, 0};
    int on = 0;
    int grc = git_config_get_string_buf(&v, cfg, "core.ignorecase");
    bool set = grc != GIT_ENOTFOUND &&
               (grc < 0 || v.ptr == NULL || git_config_parse_bool(&on, v.ptr) < 0 || on);
    git_buf_dispose(&v);
    git_config_free(cfg);
    return set;
}

int agti_workspace_scan(const agt_changes *c, agti_scan_list *out)
{
    memset(out, 0, sizeof *out);
    if (c->index == NULL || c->workdir_fd < 0 || !c->index_stamped || ignorecase(c->repo))
        return AGT_EUNSUPPORTED;
    size_t n = git_index_entrycount(c->index);
    int top = openat(c->workdir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (top < 0)
        return AGT_EUNSUPPORTED;
    scan_ctx x;
    memset(&x, 0, sizeof x);
    x.idx = c->index;
    x.index_mtime = (int64_t)c->index_stamp.mtime.tv_sec;
    x.out = out;
    x.max = n / 2 + 64;
    x.path = (agti_buf)AGTI_BUF_INIT;
    x.dents = malloc(SCAN_DENTS);
    if (x.dents == NULL) {
        close(top);
        return agti_oom();
    }
    scan_dir(&x, top, 0, n);
    free(x.dents);
    agti_buf_free(&x.path);
    if (x.rc != AGT_OK)
        agti_scan_list_free(out);
    return x.rc;
}
