/*
 * Which paths of a change set the review tools treat as sensitive. Names
 * are judged by the session's policy (lib/fs/sensitive.c); a name is not
 * the only way to reach a secret, so also:
 *  - a rename or copy in the change set with a sensitive side makes both
 *    sides sensitive: after `git mv .env notes.txt` the removed side of
 *    notes.txt's diff and its content are .env's; after `git mv draft.txt
 *    .env.local` draft.txt's diff shows what .env.local holds now;
 *  - a file of the working tree with more than one link is sensitive when
 *    a sensitive file of the working tree is the same inode (lib/fs
 *    linkset.c walks the tree once, and only when such a file is judged).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/core.h"
#include "dispatch/dispatch_internal.h"
#include "git/git_internal.h"
#include "review_guard.h"
#include "session/fs_settings.h"

#define WHY_RENAME "renamed or copied from or to a sensitive file in the change set"
#define WHY_LINK "a hard link to a sensitive file"

int agti_review_guard_init(agti_review_guard *g, agt_call *call, agt_changes *c)
{
    memset(g, 0, sizeof *g);
    g->pol = agti_session_sensitive(agt_call_session(call));
    g->c = c;
    const agt_diff *d = agt_changes_diff(c);
    size_t n = agt_diff_file_count(d), cap = 0;
    for (size_t i = 0; i < n; i++) {
        int st = agt_diff_file_status(d, i);
        if (st != AGT_DIFF_RENAMED && st != AGT_DIFF_COPIED)
            continue;
        const char *op = agt_diff_file_old_path(d, i), *np = agt_diff_file_new_path(d, i);
        if (op == NULL || np == NULL ||
            (!agti_sensitive_match(g->pol, op, NULL) && !agti_sensitive_match(g->pol, np, NULL)))
            continue;
        if (g->nother + 2 > cap) {
            size_t ncap = cap ? 2 * cap : 8;
            const char **nv = realloc(g->other, ncap * sizeof *nv);
            if (nv == NULL) {
                free(g->other);
                return agti_oom();
            }
            g->other = nv;
            cap = ncap;
        }
        g->other[g->nother++] = op;
        g->other[g->nother++] = np;
    }
    if (c->workdir != NULL && c->workdir_fd >= 0) {
        agti_linkset_init(&g->links, g->pol, c->workdir);
        g->have_links = true;
    }
    return AGT_OK;
}

void agti_review_guard_free(agti_review_guard *g)
{
    free(g->other);
    if (g->have_links)
        agti_linkset_free(&g->links);
    memset(g, 0, sizeof *g);
}

/* The repository-relative form of path, as tree.c's lookup reads it. */
static const char *relative(const agti_review_guard *g, const char *path)
{
    const char *wd = g->c->workdir;
    if (path[0] == '/' && wd != NULL && strncmp(path, wd, strlen(wd)) == 0)
        path += strlen(wd);
    while (path[0] == '.' && path[1] == '/')
        path += 2;
    return path;
}

bool agti_review_guard_path(agti_review_guard *g, const char *path, const char **why)
{
    if (agti_sensitive_match(g->pol, path, why))
        return true;
    const char *rel = relative(g, path);
    for (size_t i = 0; i < g->nother; i++)
        if (strcmp(rel, g->other[i]) == 0) {
            if (why)
                *why = WHY_RENAME;
            return true;
        }
    if (g->have_links && rel[0] != '\0' && rel[0] != '/' &&
        agti_linkset_hit_at(&g->links, g->c->workdir_fd, rel)) {
        if (why)
            *why = WHY_LINK;
        return true;
    }
    return false;
}

bool agti_review_guard_diff(agti_review_guard *g, const char *path, const char **why)
{
    if (agti_review_guard_path(g, path, why))
        return true;
    const agt_diff *d = agt_changes_diff(g->c);
    size_t i = 0;
    if (agt_diff_file_index(d, path, &i) != AGT_OK)
        return false;
    const char *op = agt_diff_file_old_path(d, i), *np = agt_diff_file_new_path(d, i);
    return (op != NULL && agti_review_guard_path(g, op, why)) ||
           (np != NULL && agti_review_guard_path(g, np, why));
}
