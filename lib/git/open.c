/*
 * Opening a change: resolve the repository and the revisions of a mode,
 * compute libgit2's diff with git's defaults, find renames, and hand it to
 * build.c.
 */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "diff/diff_internal.h"
#include "git/git_internal.h"
#include "git/index_file.h"

int agti_git_error(int code, const char *fmt, ...)
{
    agti_buf b = AGTI_BUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    agti_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    const git_error *e = git_error_last();
    if (e && e->message && e->message[0])
        agti_buf_printf(&b, ": %s", e->message);
    if (b.oom) {
        agti_buf_free(&b);
        return agti_oom();
    }
    int rc = agti_error(code, "%s", agti_buf_cstr(&b));
    agti_buf_free(&b);
    return rc;
}

static const char *mode_name(int mode)
{
    switch (mode) {
    case AGT_CHANGES_RANGE:
        return "range";
    case AGT_CHANGES_COMMIT:
        return "commit";
    default:
        return "workspace";
    }
}

/* Resolves a revision to a commit. */
static int resolve_commit(git_repository *repo, const char *spec, git_commit **out)
{
    git_object *obj = NULL, *peeled = NULL;
    int grc = git_revparse_single(&obj, repo, spec);
    if (grc < 0)
        return agti_git_error(AGT_ENOTFOUND, "revision '%s' does not resolve", spec);
    grc = git_object_peel(&peeled, obj, GIT_OBJECT_COMMIT);
    git_object_free(obj);
    if (grc < 0)
        return agti_git_error(AGT_ENOTFOUND, "revision '%s' does not name a commit", spec);
    *out = (git_commit *)peeled;
    return AGT_OK;
}

/* What to do when a shallow clone lacks the history a change needs.
 * libgit2 before 1.7 cannot fetch with a depth (git_fetch_options has no
 * depth), so the fix is left to git itself. */
#define SHALLOW_FIX                                                                                \
    "fetch more history and run again: `git fetch --deepen=1` for one commit (the parent), "       \
    "or `git fetch --unshallow` for all of it; in GitHub Actions set `fetch-depth: 0` on "         \
    "actions/checkout, in GitLab CI set the variable GIT_DEPTH: 0"

/* 1 when the repository is a shallow clone (.git/shallow lists cut commits). */
static int is_shallow(git_repository *repo)
{
    return git_repository_is_shallow(repo) == 1;
}

static int commit_tree(git_commit *commit, git_tree **out, const char *spec)
{
    if (git_commit_tree(out, commit) < 0)
        return agti_git_error(AGT_EGIT, "cannot read the tree of '%s'", spec);
    return AGT_OK;
}

/* Base tree of workspace mode: HEAD's tree, or none for an unborn HEAD. */
static int open_head(agt_changes *c)
{
    int unborn = git_repository_head_unborn(c->repo);
    if (unborn < 0)
        return agti_git_error(AGT_EGIT, "cannot read HEAD");
    if (unborn == 1)
        return AGT_OK;
    git_commit *head = NULL;
    int rc = resolve_commit(c->repo, "HEAD", &head);
    if (rc != AGT_OK)
        return rc;
    c->base_oid = *git_commit_id(head);
    c->has_base = true;
    rc = commit_tree(head, &c->base_tree, "HEAD");
    git_commit_free(head);
    return rc;
}

static void diff_options(git_diff_options *o)
{
    git_diff_options_init(o, GIT_DIFF_OPTIONS_VERSION);
    o->context_lines = 3;
    o->interhunk_lines = 0;
    o->flags = GIT_DIFF_INDENT_HEURISTIC;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Whether the working tree has no file (nor symlink, nor anything else
 * but a folder) at path: what the file list's second lstat of every entry
 * told, asked only of the paths the diff reports deleted. */
static bool gone(const agt_changes *c, const char *path)
{
    struct stat st;
    if (c->workdir_fd >= 0)
        return fstatat(c->workdir_fd, path, &st, AT_SYMLINK_NOFOLLOW) != 0 || S_ISDIR(st.st_mode);
    char *full = agti_aprintf("%s%s", c->workdir, path);
    bool g = !full || lstat(full, &st) != 0 || S_ISDIR(st.st_mode);
    free(full);
    return g;
}

/* The paths the index-to-working-tree diff reports deleted that are gone
 * from the working tree (libgit2 also reports a FIFO or a socket where a
 * file was as deleted; git sees it modified, and it stays listed). */
static int note_absent(agt_changes *c, git_diff *unstaged)
{
    size_t n = git_diff_num_deltas(unstaged), k = 0;
    for (size_t i = 0; i < n; i++)
        k += git_diff_get_delta(unstaged, i)->status == GIT_DELTA_DELETED;
    if (k == 0)
        return AGT_OK;
    c->absent = calloc(k, sizeof *c->absent);
    if (!c->absent)
        return agti_oom();
    for (size_t i = 0; i < n; i++) {
        const git_diff_delta *d = git_diff_get_delta(unstaged, i);
        if (d->status != GIT_DELTA_DELETED || !gone(c, d->old_file.path))
            continue;
        if (!(c->absent[c->nabsent] = agti_strdup(d->old_file.path)))
            return agti_oom();
        c->nabsent++;
    }
    qsort(c->absent, c->nabsent, sizeof *c->absent, cmp_str);
    return AGT_OK;
}

static size_t index_head_hits; /* test hook: change sets that took the shortcut */
static bool scan_off;          /* test hook: no workspace scan */
static size_t scan_hits;       /* test hook: diffs limited by a scan */

void agti_git_scan_disable(bool off)
{
    __atomic_store_n(&scan_off, off, __ATOMIC_RELAXED);
}

size_t agti_git_scan_hits(void)
{
    return __atomic_load_n(&scan_hits, __ATOMIC_RELAXED);
}

/* git does not compare a skip-worktree entry with the working tree
 * (ie_match_stat in git's read-cache.c), so a sparse checkout's files
 * outside its cone are not deleted for git diff and git status. libgit2 1.5
 * leaves such an entry out when its file is there, and reports it deleted
 * when it is not (or is a FIFO): every file outside the cone was in the
 * change set as deleted. Returns 1, leave the delta out, for those. */
static int skip_worktree_delta(const git_diff *so_far, const git_diff_delta *d, const char *spec,
                               void *payload)
{
    (void)so_far;
    (void)spec;
    if (d->status != GIT_DELTA_DELETED)
        return 0;
    const git_index_entry *e = git_index_get_bypath(payload, d->old_file.path, 0);
    return e != NULL && (e->flags_extended & GIT_INDEX_ENTRY_SKIP_WORKTREE) ? 1 : 0;
}

/* The index-to-working-tree diff, limited to the paths of the workspace
 * scan (scan.c) when it gives a list: the same deltas as the diff of the
 * whole tree, which it is otherwise. An empty list leaves one clean path
 * in it (a pathspec of none would be the whole tree). */
static int diff_unstaged(agt_changes *c, const git_diff_options *base, git_diff **out)
{
    agti_scan_list l;
    int rc = __atomic_load_n(&scan_off, __ATOMIC_RELAXED) ? AGT_EUNSUPPORTED
                                                          : agti_workspace_scan(c, &l);
    if (rc == AGT_ENOMEM)
        return rc;
    git_diff_options o = *base;
    o.notify_cb = skip_worktree_delta;
    o.payload = c->index;
    char *one[1];
    if (rc == AGT_OK) {
        const git_index_entry *first = git_index_get_byindex(c->index, 0);
        if (l.n == 0 && first == NULL) {
            rc = AGT_EUNSUPPORTED; /* no index entry, no file: the whole diff is as cheap */
        } else {
            one[0] = (char *)(l.n ? NULL : first->path);
            o.pathspec.strings = l.n ? l.v : one;
            o.pathspec.count = l.n ? l.n : 1;
            o.flags |= GIT_DIFF_DISABLE_PATHSPEC_MATCH;
            __atomic_add_fetch(&scan_hits, 1, __ATOMIC_RELAXED);
        }
    }
    int grc = git_diff_index_to_workdir(out, c->repo, c->index, &o);
    if (rc == AGT_OK)
        agti_scan_list_free(&l);
    if (grc < 0)
        return agti_git_error(AGT_EGIT, "cannot diff the index against the working tree of '%s'",
                              c->workdir);
    return AGT_OK;
}

size_t agti_git_index_head_hits(void)
{
    return __atomic_load_n(&index_head_hits, __ATOMIC_RELAXED);
}

/* Whether the index holds HEAD's tree exactly, as its cache tree tells
 * (the TREE extension git and libgit2 keep: the tree id each folder's
 * span of entries would be written as, dropped when an entry in the span
 * changes): when the root's covers every entry and is HEAD's tree, the
 * diff of HEAD against the index is empty, and git's own diff-index
 * --cached skips it the same way. Read without libgit2 (index_file.c),
 * and used only when the file is the one libgit2 read (the same stat data
 * around both reads) holding the same paths, none of them in a conflict
 * or added with intent to add (git leaves those out of the cache tree).
 * A 13,400-entry index: 2 ms against 19 for libgit2's tree walk. */
static bool index_is_head(const agt_changes *c, const char *ipath)
{
    if (c->base_tree == NULL || !c->index_stamped)
        return false;
    agti_index_file f;
    if (agti_index_file_read(ipath, (size_t)1 << 30, &f) != AGT_OK)
        return false;
    struct agti_file_stamp after;
    bool same = agti_file_stamp_of(ipath, &after) &&
                agti_file_stamp_equal(&c->index_stamp, &after) && f.tree_root_valid &&
                f.tree_root_entries >= 0 && (size_t)f.tree_root_entries == f.n &&
                f.n == git_index_entrycount(c->index) &&
                memcmp(f.tree_root_id, git_tree_id(c->base_tree)->id, sizeof f.tree_root_id) == 0;
    for (size_t i = 0; same && i < f.n; i++) {
        const git_index_entry *e = git_index_get_byindex(c->index, i);
        same = e != NULL && f.e[i].stage == 0 && !f.e[i].intent_to_add &&
               strcmp(e->path, f.e[i].path) == 0;
    }
    agti_index_file_free(&f);
    if (same)
        __atomic_add_fetch(&index_head_hits, 1, __ATOMIC_RELAXED);
    return same;
}

/* libgit2 1.5 refuses some indexes that newer git writes, with a message
 * that names an extension or a checksum: says which kind it is and the git
 * command that rewrites the index in a form it reads. Returns RC, the
 * failure agti_git_error recorded, its message extended. */
static int index_refused(const char *ipath, int rc)
{
    char msg[1024]; /* the whole of a last-error message (error.c's size) */
    snprintf(msg, sizeof msg, "%s", agt_error_message());
    const char *hint = NULL;
    agti_index_file f;
    int read = agti_index_file_read(ipath, (size_t)1 << 30, &f);
    if (read == AGT_OK) {
        /* index.skipHash (git 2.40+, and feature.manyFiles): the trailing
         * checksum left as zeros, which libgit2 1.5 checks */
        agti_index_file_free(&f);
        unsigned char tail[20], zero[20] = {0};
        int fd = open(ipath, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        struct stat st;
        if (fd >= 0 && fstat(fd, &st) == 0 && st.st_size >= 32 &&
            pread(fd, tail, sizeof tail, st.st_size - (off_t)sizeof tail) == (ssize_t)sizeof tail &&
            memcmp(tail, zero, sizeof tail) == 0)
            hint = "the index has no checksum (index.skipHash, which feature.manyFiles sets in git "
                   "2.40 and later), and the libgit2 this library uses reads only indexes with "
                   "one: 'git config index.skipHash false && git update-index "
                   "--force-write-index' rewrites it with one";
        if (fd >= 0)
            close(fd);
    } else if (read == AGT_EUNSUPPORTED && f.refused == AGTI_INDEX_SPLIT) {
        hint = "the index is split (core.splitIndex or update-index --split-index), which the "
               "libgit2 this library uses cannot read: 'git update-index --no-split-index' makes "
               "it one file again ('git config core.splitIndex false' keeps it so)";
    } else if (read == AGT_EUNSUPPORTED && f.refused == AGTI_INDEX_SPARSE) {
        hint = "the index is sparse (sparse-checkout --sparse-index), which the libgit2 this "
               "library uses cannot read: 'git sparse-checkout init --no-sparse-index' rewrites "
               "it in full and keeps the sparse checkout";
    }
    if (hint == NULL)
        return agti_error(rc, "%s", msg);
    return agti_error(rc, "%s; %s", msg, hint);
}

/* Workspace mode: HEAD -> index, and index -> working tree; the latter is
 * merged in unless it is empty (a clean tree reviews the index). When the
 * index holds HEAD's tree, the second alone is the change set: merged
 * into an empty first, its deltas would be copied as they are. */
static int diff_workspace(agt_changes *c, git_diff **out)
{
    if (git_repository_is_bare(c->repo))
        return agti_error(AGT_EGIT,
                          "workspace mode needs a working tree; '%s' is a bare repository",
                          git_repository_path(c->repo));
    int rc = open_head(c);
    if (rc != AGT_OK)
        return rc;
    /* the index file as read, for git's racy-clean rule (reader.c): the
     * same stat data before and after the read */
    char *ipath = agti_aprintf("%sindex", git_repository_path(c->repo));
    if (!ipath)
        return agti_oom();
    struct agti_file_stamp after;
    bool stamped = agti_file_stamp_of(ipath, &c->index_stamp);
    if (git_repository_index(&c->index, c->repo) < 0) {
        rc = index_refused(ipath,
                           agti_git_error(AGT_EGIT, "cannot read the index of '%s'", c->workdir));
        free(ipath);
        return rc;
    }
    c->index_stamped = stamped && agti_file_stamp_of(ipath, &after) &&
                       agti_file_stamp_equal(&c->index_stamp, &after);
    bool index_head = index_is_head(c, ipath);
    free(ipath);
    git_diff_options o;
    diff_options(&o);
    /* both sides carry the untracked flags: git_diff_merge() drops what the
     * target diff's options would not include */
    o.flags |= GIT_DIFF_INCLUDE_UNTRACKED | GIT_DIFF_RECURSE_UNTRACKED_DIRS |
               GIT_DIFF_SHOW_UNTRACKED_CONTENT;
    git_diff *staged = NULL, *unstaged = NULL;
    if (!index_head && git_diff_tree_to_index(&staged, c->repo, c->base_tree, c->index, &o) < 0)
        return agti_git_error(AGT_EGIT, "cannot diff HEAD against the index in '%s'", c->workdir);
    rc = diff_unstaged(c, &o, &unstaged);
    if (rc != AGT_OK) {
        git_diff_free(staged);
        return rc;
    }
    c->source = AGTI_SOURCE_INDEX;
    if (index_head) {
        if (git_diff_num_deltas(unstaged) > 0) {
            c->source = AGTI_SOURCE_WORKTREE;
            rc = note_absent(c, unstaged);
            if (rc != AGT_OK) {
                git_diff_free(unstaged);
                return rc;
            }
        }
        *out = unstaged;
        return AGT_OK;
    }
    if (git_diff_num_deltas(unstaged) > 0) {
        c->source = AGTI_SOURCE_WORKTREE;
        rc = note_absent(c, unstaged);
        if (rc != AGT_OK) {
            git_diff_free(staged);
            git_diff_free(unstaged);
            return rc;
        }
        if (git_diff_merge(staged, unstaged) < 0) {
            git_diff_free(staged);
            git_diff_free(unstaged);
            return agti_git_error(AGT_EGIT, "cannot combine staged and unstaged changes of '%s'",
                                  c->workdir);
        }
    }
    git_diff_free(unstaged);
    *out = staged;
    return AGT_OK;
}

static int diff_trees(agt_changes *c, git_diff **out, const char *what)
{
    git_diff_options o;
    diff_options(&o);
    if (git_diff_tree_to_tree(out, c->repo, c->base_tree, c->target_tree, &o) < 0)
        return agti_git_error(AGT_EGIT, "cannot diff %s", what);
    return AGT_OK;
}

static int diff_range(agt_changes *c, const char *from, const char *to, git_diff **out)
{
    git_commit *a = NULL, *b = NULL;
    int rc = resolve_commit(c->repo, from, &a);
    if (rc == AGT_OK)
        rc = resolve_commit(c->repo, to, &b);
    git_oid base;
    if (rc == AGT_OK) {
        int grc = git_merge_base(&base, c->repo, git_commit_id(a), git_commit_id(b));
        if (grc < 0 && is_shallow(c->repo))
            /* the walk stops at the cut commits: no merge base in what was
             * fetched does not mean the branches share no history */
            rc = agti_error(AGT_ENOTFOUND,
                            "no merge base of '%s' and '%s' in the fetched history: the "
                            "repository is a shallow clone; " SHALLOW_FIX
                            " (or `git fetch --shallow-exclude`/`--deepen=N` until both "
                            "branches meet)",
                            from, to);
        else if (grc == GIT_ENOTFOUND)
            rc = agti_git_error(AGT_ENOTFOUND, "'%s' and '%s' have no merge base", from, to);
        else if (grc < 0)
            rc = agti_git_error(AGT_EGIT, "cannot find the merge base of '%s' and '%s'", from, to);
    }
    git_commit *mb = NULL;
    if (rc == AGT_OK && git_commit_lookup(&mb, c->repo, &base) < 0)
        rc = agti_git_error(AGT_EGIT, "cannot read the merge base of '%s' and '%s'", from, to);
    if (rc == AGT_OK) {
        c->base_oid = base;
        c->has_base = true;
        c->target_oid = *git_commit_id(b);
        c->has_target = true;
        rc = commit_tree(mb, &c->base_tree, from);
    }
    if (rc == AGT_OK)
        rc = commit_tree(b, &c->target_tree, to);
    git_commit_free(mb);
    git_commit_free(a);
    git_commit_free(b);
    if (rc == AGT_OK) {
        char what[64 + 2 * 200];
        snprintf(what, sizeof(what), "%.200s...%.200s", from, to);
        rc = diff_trees(c, out, what);
    }
    return rc;
}

static int diff_commit(agt_changes *c, const char *spec, git_diff **out)
{
    git_commit *commit = NULL, *parent = NULL;
    int rc = resolve_commit(c->repo, spec, &commit);
    if (rc != AGT_OK)
        return rc;
    c->target_oid = *git_commit_id(commit);
    c->has_target = true;
    rc = commit_tree(commit, &c->target_tree, spec);
    if (rc == AGT_OK && git_commit_parentcount(commit) > 0) {
        if (git_commit_parent(&parent, commit, 0) < 0) {
            char hex[GIT_OID_HEXSZ + 1];
            git_oid_tostr(hex, sizeof(hex), git_commit_parent_id(commit, 0));
            if (is_shallow(c->repo))
                rc = agti_error(AGT_ENOTFOUND,
                                "cannot read the first parent of '%s': the repository is a "
                                "shallow clone and the parent %s was not fetched; " SHALLOW_FIX,
                                spec, hex);
            else
                rc = agti_git_error(AGT_EGIT, "cannot read the first parent of '%s' (%s)", spec,
                                    hex);
        } else {
            c->base_oid = *git_commit_id(parent);
            c->has_base = true;
            rc = commit_tree(parent, &c->base_tree, spec);
        }
    }
    git_commit_free(parent);
    git_commit_free(commit);
    if (rc == AGT_OK)
        rc = diff_trees(c, out, spec);
    return rc;
}

static int find_renames(git_diff *gd)
{
    git_diff_find_options fo;
    git_diff_find_options_init(&fo, GIT_DIFF_FIND_OPTIONS_VERSION);
    fo.flags = GIT_DIFF_FIND_RENAMES;
    fo.rename_threshold = 50;
    if (git_diff_find_similar(gd, &fo) < 0)
        return agti_git_error(AGT_EGIT, "rename detection failed");
    return AGT_OK;
}

static const char *nonempty(const char *s)
{
    return s && s[0] ? s : NULL;
}

/* Checks the revisions against the mode and fills in the defaults. */
static int check_revisions(int mode, const char **from, const char **to)
{
    switch (mode) {
    case AGT_CHANGES_WORKSPACE:
        if (*from || *to)
            return agti_error(AGT_EINVAL, "workspace mode takes no revision (got '%s')",
                              *from ? *from : *to);
        return AGT_OK;
    case AGT_CHANGES_RANGE:
        if (!*from)
            return agti_error(AGT_EINVAL, "range mode needs a 'from' revision");
        if (!*to)
            *to = "HEAD";
        return AGT_OK;
    case AGT_CHANGES_COMMIT:
        if (*from && *to)
            return agti_error(AGT_EINVAL, "commit mode takes one revision, got both '%s' and '%s'",
                              *from, *to);
        if (!*from)
            *from = *to ? *to : "HEAD";
        *to = NULL;
        return AGT_OK;
    default:
        return agti_error(AGT_EINVAL,
                          "unknown change mode %d (want AGT_CHANGES_WORKSPACE, "
                          "AGT_CHANGES_RANGE or AGT_CHANGES_COMMIT)",
                          mode);
    }
}

static int open_repo(agt_changes *c, const char *repo_path)
{
    int grc = git_repository_open_ext(&c->repo, repo_path, 0, NULL);
    if (grc == GIT_ENOTFOUND)
        return agti_git_error(AGT_ENOTFOUND, "'%s' is not in a git repository", repo_path);
    if (grc < 0)
        return agti_git_error(AGT_EGIT, "cannot open the git repository at '%s'", repo_path);
    const char *wd = git_repository_workdir(c->repo);
    if (wd) {
        size_t n = strlen(wd);
        c->workdir = agti_aprintf("%s%s", wd, n && wd[n - 1] == '/' ? "" : "/");
        if (!c->workdir)
            return agti_oom();
        /* when it cannot be opened (a folder without search permission
         * could still be read by full path), files are opened by full path */
        c->workdir_fd = open(c->workdir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    }
    return AGT_OK;
}

int agt_changes_open(agt_changes **out, const char *repo_path, int mode, const char *from,
                     const char *to)
{
    if (!out || !repo_path)
        return agti_error(AGT_EINVAL, "agt_changes_open: %s is NULL", !out ? "out" : "repo_path");
    *out = NULL;
    from = nonempty(from);
    to = nonempty(to);
    int rc = check_revisions(mode, &from, &to);
    if (rc != AGT_OK)
        return rc;
    if (!repo_path[0])
        return agti_error(AGT_EINVAL, "agt_changes_open: repo_path is empty");
    rc = agti_git_ensure(); /* loads libgit2 at the first repository */
    if (rc != AGT_OK)
        return rc;
    agt_changes *c = calloc(1, sizeof(*c));
    if (!c)
        return agti_oom();
    c->mode = mode;
    c->source = AGTI_SOURCE_COMMIT;
    c->workdir_fd = -1;
    git_diff *gd = NULL;
    rc = open_repo(c, repo_path);
    if (rc == AGT_OK) {
        if (mode == AGT_CHANGES_WORKSPACE)
            rc = diff_workspace(c, &gd);
        else if (mode == AGT_CHANGES_RANGE)
            rc = diff_range(c, from, to, &gd);
        else
            rc = diff_commit(c, from, &gd);
    }
    if (rc == AGT_OK)
        rc = find_renames(gd);
    if (rc == AGT_OK)
        rc = agti_changes_build(c, gd);
    git_diff_free(gd);
    if (rc != AGT_OK) {
        if (c->repo && mode != AGT_CHANGES_WORKSPACE)
            agti_error_prefix("%s mode in '%s'", mode_name(mode), repo_path);
        agt_changes_free(c);
        return rc;
    }
    *out = c;
    return AGT_OK;
}

void agt_changes_free(agt_changes *c)
{
    if (!c)
        return;
    agti_changes_readers_free(c);
    if (c->guard_cache_free != NULL)
        c->guard_cache_free(c->guard_cache);
    for (size_t i = 0; i < c->nfiles; i++)
        free(c->files[i]);
    free(c->files);
    free(c->file_ids);
    free(c->file_id_missing);
    for (size_t i = 0; i < c->nabsent; i++)
        free(c->absent[i]);
    free(c->absent);
    agt_diff_free(c->diff);
    git_tree_free(c->base_tree);
    git_tree_free(c->target_tree);
    git_index_free(c->index);
    git_repository_free(c->repo);
    if (c->workdir_fd >= 0)
        close(c->workdir_fd);
    free(c->workdir);
    free(c);
}

agt_diff *agt_changes_diff(agt_changes *c)
{
    return c ? c->diff : NULL;
}

static void json_oid(agti_buf *b, bool has, const git_oid *oid)
{
    if (!has) {
        agti_buf_puts(b, "null");
        return;
    }
    char hex[GIT_OID_HEXSZ + 1];
    git_oid_tostr(hex, sizeof(hex), oid);
    agti_buf_printf(b, "\"%s\"", hex);
}

int agt_changes_info(const agt_changes *c, char **out_json)
{
    if (!c || !out_json)
        return agti_error(AGT_EINVAL, "agt_changes_info: %s is NULL", !c ? "c" : "out_json");
    static const char *const sources[] = {"worktree", "index", "commit"};
    agti_buf b = AGTI_BUF_INIT;
    agti_buf_printf(&b, "{\"mode\":\"%s\",\"source\":\"%s\",\"base\":", mode_name(c->mode),
                    sources[c->source]);
    json_oid(&b, c->has_base, &c->base_oid);
    agti_buf_puts(&b, ",\"target\":");
    json_oid(&b, c->has_target, &c->target_oid);
    agti_buf_puts(&b, ",\"workdir\":");
    if (c->workdir)
        agti_diff_json_string(&b, c->workdir, strlen(c->workdir));
    else
        agti_buf_puts(&b, "null");
    agti_buf_printf(&b, ",\"files\":%zu}", agt_diff_file_count(c->diff));
    char *s = agti_buf_detach(&b);
    if (!s)
        return agti_oom();
    *out_json = s;
    return AGT_OK;
}

int agt_diff_from_repo(agt_diff **out, const char *repo_path, int mode, const char *from,
                       const char *to)
{
    if (!out)
        return agti_error(AGT_EINVAL, "agt_diff_from_repo: out is NULL");
    *out = NULL;
    agt_changes *c = NULL;
    int rc = agt_changes_open(&c, repo_path, mode, from, to);
    if (rc != AGT_OK)
        return rc;
    *out = c->diff;
    c->diff = NULL;
    agt_changes_free(c);
    return AGT_OK;
}
