/*
 * libagenttools — change sets from git repositories (libgit2): the diff a
 * review looks at, plus a read-only view of the reviewed tree (its file list
 * and the post-change content of any of its files).
 *
 * Three modes say which change is reviewed:
 *   AGT_CHANGES_WORKSPACE  HEAD against the working tree, staged changes
 *       included (what `git diff HEAD` shows), untracked non-ignored files as
 *       additions. When the working tree is clean relative to the index (no
 *       unstaged change and no untracked non-ignored file), the index against
 *       HEAD instead (what `git diff --cached` shows): the staged changes.
 *       With no commit yet (unborn HEAD) the base is the empty tree.
 *   AGT_CHANGES_RANGE  the merge base of `from` and `to` against `to`, as
 *       `git diff from...to` does.
 *   AGT_CHANGES_COMMIT  one commit against its first parent, as `git show`
 *       does (a root commit against the empty tree).
 * Diffs follow git's defaults: 3 context lines, no inter-hunk context, the
 * indent heuristic, rename detection (`-M`, 50% similarity, renames only, no
 * copies; untracked files are never paired with deleted ones), binary
 * detection (a NUL byte in the first 8000 bytes, or .gitattributes), file
 * modes. Paths are relative to the repository's top directory, with no a/ b/
 * prefix. ignore rules are git's: .gitignore files, .git/info/exclude and
 * core.excludesFile.
 */
#ifndef AGENTTOOLS_GIT_H
#define AGENTTOOLS_GIT_H

#include "common.h"
#include "diff.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Which change a change set covers (see the top of this header). Append-only. */
enum agt_changes_mode {
    AGT_CHANGES_WORKSPACE = 0, /**< HEAD against the working tree (or the index) */
    AGT_CHANGES_RANGE = 1,     /**< merge-base(from, to) against to */
    AGT_CHANGES_COMMIT = 2     /**< a commit against its first parent */
};

/**
 * A reviewed change of a git repository (opaque): its change set, the list of
 * files of the reviewed tree and their post-change contents. It keeps the
 * repository open. One thread at a time.
 */
typedef struct agt_changes agt_changes;

/**
 * Opens a repository and computes the change set of one mode.
 *
 * Revisions are anything libgit2's git_revparse_single() resolves and that
 * peels to a commit: a branch, a tag, a full or abbreviated SHA-1, HEAD~2,
 * main^2, ... An empty string counts as NULL.
 *  - AGT_CHANGES_WORKSPACE: from and to must be NULL.
 *  - AGT_CHANGES_RANGE: from is required; to defaults to "HEAD".
 *  - AGT_CHANGES_COMMIT: the commit is from, or to when from is NULL, or
 *    "HEAD" when both are NULL; giving both is an error.
 *
 * The post-change content of every changed text file that exists after the
 * change is attached to the change set (agt_diff_set_content) for anchoring:
 * the working-tree file in workspace mode (the index blob when the index is
 * reviewed), the blob at the target commit otherwise; a symbolic link's
 * content is its target path, as git stores it. Files over 8 MiB (8388608
 * bytes) are not attached, nor any file once 256 MiB have been attached in
 * total: the change set then carries a warning naming the file
 * (agt_diff_to_json "warnings", which here do not set "best_effort"), and so
 * does a working-tree file that could not be read.
 *
 * @param out       receives the handle; free it with agt_changes_free().
 * @param repo_path a directory inside the repository's working tree (or the
 *                  repository itself); parent directories are searched for
 *                  ".git" as git does.
 * @param mode      an AGT_CHANGES_* value.
 * @param from      a revision (see above), or NULL.
 * @param to        a revision (see above), or NULL.
 * @return AGT_OK;
 *         AGT_EINVAL when out or repo_path is NULL, mode is unknown, or the
 *         revisions do not fit the mode (the message says which);
 *         AGT_ENOTFOUND when repo_path is not inside a git repository, a
 *         revision does not resolve to a commit, or a range has no merge base
 *         (the message names the path or the revision); also when the
 *         repository is a shallow clone that lacks the history the change
 *         needs (the first parent of the commit, or the merge base of the
 *         range): the message then names the missing commit and how to fetch
 *         it (`git fetch --deepen=1`, `git fetch --unshallow`, `fetch-depth: 0`
 *         in GitHub Actions' checkout). Nothing is fetched: the libgit2 this
 *         library supports (1.5) cannot deepen a shallow clone;
 *         AGT_EGIT when a libgit2 operation failed, or workspace mode is asked
 *         of a bare repository (the message has libgit2's text and names the
 *         path or revision); AGT_ELIMIT when the diff text exceeds 4 GiB;
 *         AGT_ENOMEM.
 */
AGT_EXTERN int agt_changes_open(agt_changes **out, const char *repo_path, int mode,
                                const char *from, const char *to);

/**
 * Frees the handle, its change set and the repository it holds. NULL is ignored.
 */
AGT_EXTERN void agt_changes_free(agt_changes *c);

/**
 * The change set, borrowed: valid until agt_changes_free(). The caller may
 * set contents or a relocator on it but must not free it.
 *
 * @return the change set, or NULL when c is NULL.
 */
AGT_EXTERN agt_diff *agt_changes_diff(agt_changes *c);

/**
 * Describes the reviewed change as JSON:
 * {"mode":"workspace|range|commit","source":"worktree|index|commit",
 *  "base":"<40 hex>"|null,"target":"<40 hex>"|null,"workdir":"/abs/dir/"|null,
 *  "files":n}.
 * "source" says where the post-change side comes from: the working tree, the
 * index (workspace mode with a clean working tree) or the target commit.
 * "base" is the commit diffed against (HEAD, the merge base or the first
 * parent; null for an unborn HEAD or a root commit); "target" is the reviewed
 * commit (null in workspace mode). "workdir" ends with "/" (null for a bare
 * repository). "files" is the number of files in the change set.
 *
 * @param c        the handle.
 * @param out_json receives NUL-terminated JSON; free with agt_free().
 * @return AGT_OK; AGT_EINVAL when c or out_json is NULL; AGT_ENOMEM.
 */
AGT_EXTERN int agt_changes_info(const agt_changes *c, char **out_json);

/**
 * Lists the files of the reviewed tree as a JSON array of repository-relative
 * paths, sorted by bytes (as `git ls-files` sorts them). Workspace mode: the
 * tracked files present in the working tree plus the untracked non-ignored
 * files (`git ls-files --cached --others --exclude-standard`, minus files
 * deleted from the working tree); when the index is reviewed, the index's
 * files. Range and commit modes: the files of the target commit's tree
 * (`git ls-tree -r --name-only TARGET`). Submodules (gitlinks) are not
 * listed. Symbolic links are. Invalid UTF-8 in a path is replaced by U+FFFD.
 *
 * @param c        the handle.
 * @param out_json receives NUL-terminated JSON; free with agt_free().
 * @return AGT_OK; AGT_EINVAL when c or out_json is NULL; AGT_EGIT when the
 *         tree or the index could not be read; AGT_EIO when the working tree
 *         could not be examined; AGT_ENOMEM.
 */
AGT_EXTERN int agt_changes_list_files(agt_changes *c, char **out_json);

/**
 * Reads the post-change content of one file of the reviewed tree (any file
 * agt_changes_list_files() lists, whether or not it changed): the working-tree
 * file in workspace mode (the index blob when the index is reviewed), the blob
 * at the target commit otherwise. A symbolic link reads as its target path,
 * as git stores it. The bytes are returned as they are (binary too).
 *
 * @param c        the handle.
 * @param path     repository-relative path; a leading "./" and an absolute
 *                 path inside the working tree are accepted.
 * @param out_text receives the bytes, NUL-terminated; free with agt_free().
 * @param out_len  receives the length in bytes (may be NULL).
 * @return AGT_OK; AGT_EINVAL when c, path or out_text is NULL or path is empty;
 *         AGT_ENOTFOUND when the path is not a file of the reviewed tree (a
 *         directory, a submodule, an ignored or missing file: the message
 *         names the path); AGT_ELIMIT when the file exceeds 64 MiB
 *         (67108864 bytes); AGT_EIO when the working-tree file could not be
 *         read; AGT_EGIT when the blob could not be read; AGT_ENOMEM.
 */
AGT_EXTERN int agt_changes_read_file(agt_changes *c, const char *path, char **out_text,
                                     size_t *out_len);

/**
 * Computes the change set of a repository in one call: agt_changes_open()
 * followed by taking its change set (post-change contents attached).
 *
 * @param out       receives the change set; free it with agt_diff_free().
 * @param repo_path see agt_changes_open().
 * @param mode      an AGT_CHANGES_* value.
 * @param from      see agt_changes_open().
 * @param to        see agt_changes_open().
 * @return the codes of agt_changes_open(); AGT_EINVAL also when out is NULL.
 */
AGT_EXTERN int agt_diff_from_repo(agt_diff **out, const char *repo_path, int mode, const char *from,
                                  const char *to);

#ifdef __cplusplus
}
#endif

#endif /* AGENTTOOLS_GIT_H */
