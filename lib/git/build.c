/*
 * libgit2 diff -> agt_diff: one file per delta, hunks and lines from
 * git_patch, and the post-change content of every text file that exists
 * after the change attached for anchoring.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff/diff_internal.h"
#include "git/git_internal.h"

/* A warning about contents or unreadable files: the diff itself is complete,
 * so it does not make the change set "best_effort". */
static int note(agt_diff *d, const char *what, const char *path, const char *why)
{
    bool best_effort = d->best_effort;
    int rc = agti_diff_add_warning(d, "%s '%s' %s", what, path, why);
    d->best_effort = best_effort;
    return rc;
}

static int map_status(git_delta_t st)
{
    switch (st) {
    case GIT_DELTA_ADDED:
    case GIT_DELTA_UNTRACKED:
        return AGT_DIFF_ADDED;
    case GIT_DELTA_DELETED:
        return AGT_DIFF_DELETED;
    case GIT_DELTA_RENAMED:
        return AGT_DIFF_RENAMED;
    case GIT_DELTA_COPIED:
        return AGT_DIFF_COPIED;
    case GIT_DELTA_MODIFIED:
    case GIT_DELTA_TYPECHANGE:
    case GIT_DELTA_CONFLICTED:
        return AGT_DIFF_MODIFIED;
    default: /* unmodified, ignored, unreadable */
        return -1;
    }
}

/* The text after the hunk header's second "@@ ", without the line end. */
static void hunk_section(const git_diff_hunk *h, const char **s, size_t *len)
{
    size_t n = h->header_len < sizeof(h->header) ? h->header_len : sizeof(h->header);
    const char *p = h->header;
    *s = "";
    *len = 0;
    if (n < 4)
        return;
    const char *end = p + n;
    const char *q = NULL;
    for (const char *t = p + 2; t + 1 < end; t++)
        if (t[0] == '@' && t[1] == '@') {
            q = t + 2;
            break;
        }
    if (!q)
        return;
    if (q < end && *q == ' ')
        q++;
    while (end > q && (end[-1] == '\n' || end[-1] == '\r'))
        end--;
    *s = q;
    *len = (size_t)(end - q);
}

static int add_hunks(agt_diff *d, git_patch *patch)
{
    size_t nh = git_patch_num_hunks(patch);
    for (size_t hi = 0; hi < nh; hi++) {
        const git_diff_hunk *h = NULL;
        size_t nl = 0;
        if (git_patch_get_hunk(&h, &nl, patch, hi) < 0)
            return agti_git_error(AGT_EGIT, "cannot read hunk %zu", hi + 1);
        const char *sec;
        size_t seclen;
        hunk_section(h, &sec, &seclen);
        if (h->old_start < 0 || h->old_lines < 0 || h->new_start < 0 || h->new_lines < 0)
            return agti_error(AGT_EGIT, "hunk %zu has a negative line number", hi + 1);
        int rc = agti_diff_add_hunk(d, (uint32_t)h->old_start, (uint32_t)h->old_lines,
                                    (uint32_t)h->new_start, (uint32_t)h->new_lines, sec, seclen);
        if (rc != AGT_OK)
            return rc;
        for (size_t li = 0; li < nl; li++) {
            const git_diff_line *l = NULL;
            if (git_patch_get_line_in_hunk(&l, patch, hi, li) < 0)
                return agti_git_error(AGT_EGIT, "cannot read line %zu of hunk %zu", li + 1, hi + 1);
            char origin = l->origin;
            if (origin != GIT_DIFF_LINE_CONTEXT && origin != GIT_DIFF_LINE_ADDITION &&
                origin != GIT_DIFF_LINE_DELETION)
                continue; /* "\ No newline" markers: seen from the content */
            size_t len = l->content_len;
            bool noeol = !(len > 0 && l->content[len - 1] == '\n');
            if (!noeol)
                len--;
            rc = agti_diff_add_line(d, origin, l->content, len, noeol);
            if (rc != AGT_OK)
                return rc;
        }
    }
    return AGT_OK;
}

static bool is_content_mode(uint32_t mode)
{
    return mode == GIT_FILEMODE_BLOB || mode == GIT_FILEMODE_BLOB_EXECUTABLE ||
           mode == GIT_FILEMODE_LINK;
}

/* Copies a blob (at most max bytes: AGT_ELIMIT with *size set beyond). */
static int load_blob(agt_changes *c, const git_oid *id, const char *path, size_t max, char **out,
                     size_t *len, size_t *size)
{
    git_blob *blob = NULL;
    if (git_blob_lookup(&blob, c->repo, id) < 0)
        return agti_git_error(AGT_EGIT, "cannot read the blob of '%s'", path);
    git_object_size_t n = git_blob_rawsize(blob);
    int rc = AGT_OK;
    *size = (size_t)n;
    if (n > max) {
        rc = agti_error(AGT_ELIMIT, "'%s' has %llu bytes, more than %zu", path,
                        (unsigned long long)n, max);
    } else if (!(*out = malloc((size_t)n + 1))) {
        rc = agti_oom();
    } else {
        memcpy(*out, git_blob_rawcontent(blob), (size_t)n);
        (*out)[n] = '\0';
        *len = (size_t)n;
    }
    git_blob_free(blob);
    return rc;
}

/* The post-change bytes of a file: the working-tree file or the blob. */
static int load_new(agt_changes *c, const git_diff_file *nf, size_t max, char **out, size_t *len,
                    size_t *size)
{
    if (c->source == AGTI_SOURCE_WORKTREE)
        return agti_changes_read_workdir(c, nf->path, max, out, len, size);
    return load_blob(c, &nf->id, nf->path, max, out, len, size);
}

/* Attaches the post-change content of one file; a file too large or an
 * unreadable working-tree file gets a warning instead. */
static int attach_content(agt_changes *c, const git_diff_file *nf)
{
    char *text = NULL;
    size_t len = 0, size = 0;
    int rc = load_new(c, nf, AGTI_GIT_CONTENT_MAX, &text, &len, &size);
    if (rc == AGT_ELIMIT) {
        char why[80];
        snprintf(why, sizeof(why), "not attached: %zu bytes > 8 MiB", size);
        return note(c->diff, "content of", nf->path, why);
    }
    if (rc != AGT_OK && c->source == AGTI_SOURCE_WORKTREE && rc != AGT_ENOMEM)
        return note(c->diff, "content of", nf->path, "not attached: unreadable");
    if (rc != AGT_OK)
        return rc;
    if (len > AGTI_GIT_CONTENT_TOTAL - c->content_bytes) {
        free(text);
        return note(c->diff, "content of", nf->path, "not attached: 256 MiB of contents reached");
    }
    c->content_bytes += len;
    rc = agt_diff_set_content(c->diff, nf->path, text, len);
    free(text);
    return rc;
}

/* git's similarity index of a rename or copy; libgit2's own score stays
 * when a side is too large or unreadable. */
static int rename_similarity(agt_changes *c, const git_diff_delta *dl, bool binary, int *sim)
{
    if (!git_oid_is_zero(&dl->old_file.id) && git_oid_equal(&dl->old_file.id, &dl->new_file.id)) {
        *sim = 100;
        return AGT_OK;
    }
    char *src = NULL, *dst = NULL;
    size_t sl = 0, dlen = 0, size;
    int rc =
        load_blob(c, &dl->old_file.id, dl->old_file.path, AGTI_GIT_CONTENT_MAX, &src, &sl, &size);
    if (rc == AGT_OK)
        rc = load_new(c, &dl->new_file, AGTI_GIT_CONTENT_MAX, &dst, &dlen, &size);
    if (rc == AGT_OK) {
        int s = agti_git_similarity(src, sl, dst, dlen, !binary);
        if (s < 0)
            rc = agti_oom();
        else
            *sim = s;
    } else if (rc != AGT_ENOMEM) {
        rc = AGT_OK;
    }
    free(src);
    free(dst);
    return rc;
}

static int add_delta(agt_changes *c, git_diff *gd, size_t i)
{
    git_patch *patch = NULL;
    if (git_patch_from_diff(&patch, gd, i) < 0)
        return agti_git_error(AGT_EGIT, "cannot compute the diff of '%s'",
                              git_diff_get_delta(gd, i)->new_file.path);
    const git_diff_delta *dl = patch ? git_patch_get_delta(patch) : git_diff_get_delta(gd, i);
    int status = map_status(dl->status);
    /* an untracked directory (a nested repository) is not a file */
    if (status < 0 || (status == AGT_DIFF_ADDED && dl->new_file.mode == GIT_FILEMODE_TREE)) {
        int rc = AGT_OK;
        if (dl->status == GIT_DELTA_UNREADABLE)
            rc = note(c->diff, "file", dl->new_file.path, "is unreadable and left out");
        git_patch_free(patch);
        return rc;
    }
    bool binary = (dl->flags & GIT_DIFF_FLAG_BINARY) != 0;
    const char *op = status == AGT_DIFF_ADDED ? NULL : dl->old_file.path;
    const char *np = status == AGT_DIFF_DELETED ? NULL : dl->new_file.path;
    uint32_t om = status == AGT_DIFF_ADDED ? 0 : dl->old_file.mode;
    uint32_t nm = status == AGT_DIFF_DELETED ? 0 : dl->new_file.mode;
    int sim = status == AGT_DIFF_RENAMED || status == AGT_DIFF_COPIED ? (int)dl->similarity : -1;
    int rc = AGT_OK;
    if (sim >= 0)
        rc = rename_similarity(c, dl, binary, &sim);
    if (rc == AGT_OK)
        rc = agti_diff_add_file(c->diff, op, np, status, binary, om, nm, sim);
    if (rc == AGT_OK && patch && !binary)
        rc = add_hunks(c->diff, patch);
    if (rc == AGT_OK && np && !binary && is_content_mode(nm))
        rc = attach_content(c, &dl->new_file);
    git_patch_free(patch);
    if (rc != AGT_OK)
        agti_error_prefix("'%s'", np ? np : op);
    return rc;
}

int agti_changes_build(agt_changes *c, git_diff *gd)
{
    int rc = agti_diff_new(&c->diff);
    size_t n = git_diff_num_deltas(gd);
    for (size_t i = 0; rc == AGT_OK && i < n; i++)
        rc = add_delta(c, gd, i);
    return rc;
}
