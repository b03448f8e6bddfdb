/* apply_patch: a patch in the Codex format (lib/patch/codex.c) applied to
 * the workspace all or nothing. Every path of the patch (Move to targets
 * included) is resolved like Write and Edit resolve theirs (root
 * confinement, allowed folders, sensitive files, plan mode); every new
 * content is computed in memory first; then all the changes are made in
 * one agti_fs_txn, which puts back what it changed when a step fails. An
 * existing file the patch updates or deletes goes through Edit's staleness
 * check first (lib/session/seen.c: refused when it changed on disk since
 * the session read it, or, with AGT_EDIT_REQUIRE_READ, was never read),
 * and what the patch leaves is what the session has seen afterwards. */
#include <fcntl.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dispatch/dispatch_internal.h"
#include "fs/fs.h"
#include "patch/codex.h"
#include "patch/patch.h"
#include "session/fs_settings.h"
#include "session/seen.h"
#include "tools_internal.h"
#include "ws.h"

/* A path of the patch, resolved. */
typedef struct ppath {
    char *given; /* as written in the patch */
    agti_ws_path p;
} ppath;

typedef struct pctx {
    agt_call *call;
    const agti_patch *patch;
    ppath *v;
    size_t n;
} pctx;

/* Whether the patch creates path (Add File or Move to). */
static bool creates(const agti_patch *p, const char *path)
{
    for (size_t i = 0; i < p->nops; i++) {
        const agti_pop *o = &p->ops[i];
        if ((o->kind == AGTI_PATCH_ADD && strcmp(o->path, path) == 0) ||
            (o->move_to != NULL && strcmp(o->move_to, path) == 0))
            return true;
    }
    return false;
}

/* Whether the patch changes the existing file path (Update or Delete). */
static bool changes_existing(const agti_patch *p, const char *path)
{
    for (size_t i = 0; i < p->nops; i++)
        if (p->ops[i].kind != AGTI_PATCH_ADD && strcmp(p->ops[i].path, path) == 0)
            return true;
    return false;
}

static int load(void *vctx, const char *path, agti_pload *out, agti_buf *err)
{
    (void)err; /* the resolution's messages go to the call */
    pctx *c = vctx;
    ppath *np = realloc(c->v, (c->n + 1) * sizeof *np);
    if (np == NULL)
        return agti_oom();
    c->v = np;
    ppath *pp = &c->v[c->n];
    memset(pp, 0, sizeof *pp);
    pp->given = agti_strdup(path);
    if (pp->given == NULL)
        return agti_oom();
    unsigned how = AGTI_WS_OPEN | AGTI_WS_CHANGE | AGTI_WS_MISSING;
    if (creates(c->patch, path))
        how |= AGTI_WS_WRITE;
    int rc = agti_ws_resolve(c->call, pp->given, how, O_RDONLY | O_NONBLOCK, true, &pp->p);
    if (rc != AGT_OK) {
        free(pp->given);
        return rc;
    }
    c->n++;
    out->key = agti_strdup(pp->p.abs);
    if (out->key == NULL)
        return agti_oom();
    out->exists = pp->p.loc.exists;
    if (!out->exists)
        return AGT_OK;
    rc = agti_ws_load(c->call, &pp->p, AGTI_EDIT_MAX_BYTES, &out->data, &out->len);
    if (rc == AGT_OK && changes_existing(c->patch, path))
        rc = agti_ws_check_seen(c->call, &pp->p, "apply_patch", out->data, out->len, true);
    if (rc == AGT_OK && memchr(out->data, '\0', out->len) != NULL)
        rc = agti_tool_fail(c->call, AGT_EUNSUPPORTED,
                            "%s is a binary file (it contains NUL bytes); apply_patch changes text "
                            "files only. Nothing was changed.",
                            pp->p.rel);
    if (pp->p.loc.fd >= 0) {
        close(pp->p.loc.fd); /* only the folder is needed from here on */
        pp->p.loc.fd = -1;
    }
    return rc;
}

static const ppath *find(const pctx *c, const char *key)
{
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->v[i].p.abs, key) == 0)
            return &c->v[i];
    return NULL;
}

static void ctx_free(pctx *c, bool undo_dirs)
{
    for (size_t i = 0; i < c->n; i++) {
        if (undo_dirs)
            agti_fsloc_undo_dirs(&c->v[i].p.loc);
        agti_ws_path_free(&c->v[i].p);
        free(c->v[i].given);
    }
    free(c->v);
}

static bool changed(const agti_pfile *f)
{
    if (f->existed != f->exists)
        return true;
    return f->exists && (f->len != f->old_len || memcmp(f->data, f->old, f->len) != 0);
}

static size_t count_lines(const char *s, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += s[i] == '\n';
    return k + (n > 0 && s[n - 1] != '\n');
}

/* Whether f was removed by a move (a Move to names it as the source). */
static bool move_source(const agti_patch_result *res, const agti_pfile *f)
{
    for (size_t k = 0; k < res->n; k++)
        if (res->files[k].moved_from != NULL && res->files[k].exists &&
            strcmp(res->files[k].moved_from, f->path) == 0)
            return !f->exists;
    return false;
}

/* The result: one line per file (A added, M modified, D deleted, R moved). */
static int summary(agt_call *call, const pctx *c, const agti_patch_result *res)
{
    agti_buf b = AGTI_BUF_INIT;
    size_t n = 0;
    for (size_t i = 0; i < res->n; i++) {
        const agti_pfile *f = &res->files[i];
        if (!changed(f) || move_source(res, f))
            continue;
        const ppath *pp = find(c, f->key);
        const char *rel = pp ? pp->p.rel : f->path;
        n++;
        if (f->moved_from != NULL && f->exists) {
            const agti_pfile *src = NULL;
            for (size_t k = 0; k < res->n && src == NULL; k++)
                if (strcmp(res->files[k].path, f->moved_from) == 0)
                    src = &res->files[k];
            const ppath *sp = src ? find(c, src->key) : NULL;
            agti_buf_printf(&b, "\nR %s -> %s (%zu hunk%s)", sp ? sp->p.rel : f->moved_from, rel,
                            f->hunks, f->hunks == 1 ? "" : "s");
        } else if (!f->existed) {
            size_t l = count_lines(f->data, f->len);
            agti_buf_printf(&b, "\nA %s (%zu line%s)", rel, l, l == 1 ? "" : "s");
        } else if (!f->exists) {
            agti_buf_printf(&b, "\nD %s", rel);
        } else {
            agti_buf_printf(&b, "\nM %s (%zu hunk%s)", rel, f->hunks, f->hunks == 1 ? "" : "s");
        }
        if (pp != NULL && f->existed && f->exists && pp->p.loc.st.st_nlink > 1) {
            unsigned long nl = (unsigned long)pp->p.loc.st.st_nlink;
            if (agti_tool_write_flags(call) & AGTI_WRITE_LINKS_IN_PLACE)
                agti_buf_printf(&b,
                                "\n  %s has %lu names (hard links): it was rewritten in "
                                "place, so every name shows the new content.",
                                rel, nl);
            else
                agti_buf_printf(&b,
                                "\n  %s had %lu names (hard links): the link was broken, "
                                "%s is a new file now and the other names keep the old "
                                "content.",
                                rel, nl, rel);
        }
        if (f->notes.len > 0)
            agti_buf_put(&b, f->notes.ptr, f->notes.len);
    }
    agti_buf head = AGTI_BUF_INIT;
    if (n == 0)
        agti_buf_puts(&head, "The patch changes nothing: every file already has the content it "
                             "gives.");
    else
        agti_buf_printf(&head, "Applied the patch to %zu file%s:", n, n == 1 ? "" : "s");
    agti_buf_put(&head, b.ptr ? b.ptr : "", b.len);
    head.oom = head.oom || b.oom;
    agti_buf_free(&b);
    return agti_ws_finish(call, &head);
}

int agti_tool_apply_patch(agt_call *call, void *payload)
{
    (void)payload;
    json_t *args = agti_call_args_json(call);
    json_t *jin = json_object_get(args, "input");
    if (!json_is_string(jin))
        return agti_tool_fail(call, AGT_EINVAL,
                              "apply_patch needs \"input\": the patch text, from '*** Begin "
                              "Patch' to '*** End Patch'.");
    agti_buf err = AGTI_BUF_INIT;
    agti_patch *patch = NULL;
    int rc = agti_patch_parse(json_string_value(jin), json_string_length(jin), &patch, &err);
    if (rc != AGT_OK) {
        if (rc == AGT_ENOMEM || err.oom) {
            agti_buf_free(&err);
            return agti_oom();
        }
        rc = agti_tool_fail(call, rc,
                            "The patch could not be read, nothing was changed: %s Fix that line "
                            "and send the whole patch again.",
                            agti_buf_cstr(&err));
        agti_buf_free(&err);
        return rc;
    }
    pctx c = {call, patch, NULL, 0};
    agti_patch_result res = {0};
    bool strict = (agti_session_edit_options(agt_call_session(call)) & AGT_EDIT_STRICT) != 0;
    rc = agti_patch_apply(patch, strict ? AGTI_MATCH_EXACT : AGTI_MATCH_UNICODE, load, &c, &res,
                          &err);
    if (rc != AGT_OK) {
        if (rc != AGT_ENOMEM && !err.oom && err.len > 0)
            rc = agti_tool_fail(call, rc, "The patch was not applied: %s", agti_buf_cstr(&err));
        else if (rc == AGT_ENOMEM || err.oom)
            rc = agti_oom();
        /* else: the loader set the call's error (path refused, unreadable) */
        goto out;
    }
    agti_fs_txn *t = NULL;
    if ((rc = agti_fs_txn_new(&t)) != AGT_OK)
        goto out;
    unsigned flags = agti_tool_write_flags(call);
    for (size_t i = 0; i < res.n && rc == AGT_OK; i++) {
        const agti_pfile *f = &res.files[i];
        if (!changed(f))
            continue;
        const ppath *pp = find(&c, f->key);
        if (pp == NULL) {
            rc = agti_error(AGT_ERROR, "apply_patch: a file of the result was never loaded");
            break;
        }
        if (f->exists)
            rc = agti_fs_txn_put(t, pp->p.loc.dirfd, pp->p.loc.name, pp->p.rel, f->data, f->len,
                                 flags);
        else
            rc = agti_fs_txn_remove(t, pp->p.loc.dirfd, pp->p.loc.name, pp->p.rel);
    }
    bool restored = true;
    if (rc == AGT_OK)
        rc = agti_fs_txn_commit(t, &restored);
    agti_fs_txn_free(t);
    if (rc == AGT_ENOMEM)
        goto out;
    if (rc != AGT_OK) {
        char *msg = agti_strdup(agt_error_message());
        if (restored)
            rc = agti_tool_fail(call, rc,
                                "The patch was not applied: %s. Every file it had changed was "
                                "put back, so nothing was changed.",
                                msg ? msg : "error");
        else
            rc = agti_tool_fail(call, rc,
                                "The patch was not applied and putting back the files it had "
                                "changed failed: %s. Tell the user: those files need to be "
                                "restored from the copies named.",
                                msg ? msg : "error");
        free(msg);
        goto out;
    }
    /* The session knows what it wrote, as Edit's own writes count as read. */
    for (size_t i = 0; i < res.n; i++) {
        const agti_pfile *f = &res.files[i];
        const ppath *pp = changed(f) ? find(&c, f->key) : NULL;
        if (pp != NULL && f->exists)
            agti_ws_record_seen(call, &pp->p, f->data, f->len);
        else if (pp != NULL)
            agti_seen_forget(agt_call_session(call), pp->p.abs);
    }
    rc = summary(call, &c, &res);
    agti_patch_result_clear(&res);
    agti_patch_free(patch);
    agti_buf_free(&err);
    ctx_free(&c, false);
    return rc;
out:
    agti_patch_result_clear(&res);
    agti_patch_free(patch);
    agti_buf_free(&err);
    ctx_free(&c, true);
    return rc;
}
