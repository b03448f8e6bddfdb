/*
 * Internal side of the git engine: the agt_changes handle and helpers shared
 * by its files (open.c resolves revisions and builds the libgit2 diff,
 * build.c turns it into an agt_diff, tree.c lists and reads the reviewed
 * tree). The review tools use agti_changes_files() to walk the file list
 * without a JSON round trip.
 */
#ifndef AGT_LIB_GIT_INTERNAL_H
#define AGT_LIB_GIT_INTERNAL_H

#include <git2.h>
#include <stdbool.h>
#include <stddef.h>

#include "agenttools/git.h"
#include "core/core.h"

/* Post-change contents larger than this are not attached for anchoring. */
#define AGTI_GIT_CONTENT_MAX ((size_t)8 << 20)
/* ... and once this much has been attached in total, no more. */
#define AGTI_GIT_CONTENT_TOTAL ((size_t)256 << 20)
/* agt_changes_read_file() refuses files larger than this. */
#define AGTI_GIT_READ_MAX ((size_t)64 << 20)

/* Where the post-change side of the change set lives. */
enum agti_changes_source {
    AGTI_SOURCE_WORKTREE = 0,
    AGTI_SOURCE_INDEX = 1,
    AGTI_SOURCE_COMMIT = 2
};

struct agt_changes {
    git_repository *repo;
    int mode;              /* AGT_CHANGES_* */
    int source;            /* AGTI_SOURCE_* */
    git_index *index;      /* workspace mode */
    git_tree *base_tree;   /* NULL: the empty tree */
    git_tree *target_tree; /* range/commit mode */
    git_oid base_oid, target_oid;
    bool has_base, has_target;
    char *workdir; /* with a trailing '/', NULL for a bare repository */
    agt_diff *diff;
    size_t content_bytes; /* attached so far */
    /* reviewed-tree file list, built on first use */
    char **files;
    size_t nfiles;
    bool files_built;
};

/* Records `code` with the formatted message followed by ": " and libgit2's
 * last error message (when there is one); returns code. */
int agti_git_error(int code, const char *fmt, ...) AGTI_PRINTF(2, 3);

/* Builds c->diff from a libgit2 diff (renames already found). */
int agti_changes_build(agt_changes *c, git_diff *gd);

/* Reads a working-tree file (a symlink reads as its target) into a
 * NUL-terminated malloc'd buffer. When the file is larger than max, returns
 * AGT_ELIMIT with *out_size set. */
int agti_changes_read_workdir(const agt_changes *c, const char *path, size_t max, char **out,
                              size_t *out_len, size_t *out_size);

/* git's similarity index (0..100) of src renamed to dst, as `git diff -M`
 * prints it; -1 when out of memory. */
int agti_git_similarity(const char *src, size_t src_len, const char *dst, size_t dst_len,
                        bool is_text);

/* The sorted list of files of the reviewed tree (borrowed, valid until the
 * handle is freed); built on the first call. */
int agti_changes_files(agt_changes *c, const char *const **out_paths, size_t *out_n);

#endif
