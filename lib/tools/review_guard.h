/* The review tools' sensitive-file test (review_guard.c): a path of the
 * change set is sensitive by its name, as another name of a sensitive file
 * in the change set (either side of a rename or copy one side of which is
 * sensitive: `git mv .env notes.txt` makes both names sensitive; an added
 * or deleted file holding half or more of a sensitive file, for a plain mv
 * or cp git does not pair), or as a
 * hard link in the working tree to a sensitive file there. */
#ifndef AGT_LIB_TOOLS_REVIEW_GUARD_H
#define AGT_LIB_TOOLS_REVIEW_GUARD_H

#include <stdbool.h>
#include <stddef.h>

#include "agenttools/dispatch.h"
#include "agenttools/git.h"
#include "fs/fs.h"

typedef struct agti_review_guard {
    const agti_sensitive *pol; /* the session's policy */
    agt_changes *c;
    const char **other;     /* paths (borrowed from the diff) that are other names of a
                               sensitive file: renamed or copied from or to one, or moved
                               without git pairing them (see review_guard.c) */
    const char **other_why; /* the phrase of each (both borrowed from the change set's cache) */
    size_t nother;
    agti_linkset links; /* the working tree's sensitive files with several links */
    bool have_links;
} agti_review_guard;

/* For a call of a review tool over c. AGT_ENOMEM (nothing to free then). */
int agti_review_guard_init(agti_review_guard *g, agt_call *call, agt_changes *c);
/* The same under policy pol (NULL: built-in), for agt_session_check_sensitive. */
int agti_review_guard_init_pol(agti_review_guard *g, const agti_sensitive *pol, agt_changes *c);
void agti_review_guard_free(agti_review_guard *g);

/* Whether path (repository-relative; "./x" and an absolute path in the
 * working tree are accepted as agt_changes_read_file accepts them) is
 * sensitive; *why (may be NULL) gets a static phrase. */
bool agti_review_guard_path(agti_review_guard *g, const char *path, const char **why);

/* Only what the path's name tells (the session's patterns, renames and
 * copies of sensitive files), no look at the file itself (hard links):
 * what a search may count whether or not the file matched. */
bool agti_review_guard_by_name(agti_review_guard *g, const char *path);

/* The same for a path of file_read_diff, with both names of the diff's
 * file it leads to (agt_diff_file_index: also by "a/" or "b/" prefix). */
bool agti_review_guard_diff(agti_review_guard *g, const char *path, const char **why);

#endif
