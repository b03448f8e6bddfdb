/*
 * A file tool's path outside every folder of the session (issue 15, "one
 * policy"): not a wall but an approval matter. The gate asks in manual and
 * plan mode and admits it in yolo and auto mode; approving it once admits
 * the folder for that call, approving it for the session adds the folder:
 * for Read/Glob/Grep/ReadMediaFile as a folder the file tools read, for
 * Write/Edit/MultiEdit as a writable root of the file tools and of the
 * sandboxed commands alike. Deny rules are applied before (the gate's
 * verdict check) and sensitive files stay refused by the tools.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/core.h"
#include "dispatch/dispatch_internal.h"
#include "events_internal.h"
#include "fs/fs.h"
#include "fs_settings.h"
#include "agenttools/sandbox.h"
#include "outside.h"
#include "policy.h"
#include "sandbox_settings.h"
#include "session_internal.h"

/* The file tools with a path argument: whether they write, and whether the
 * path names a folder (Glob, Grep). */
static bool file_tool(const char *tool, bool *write, bool *folder)
{
    *write =
        strcmp(tool, "Write") == 0 || strcmp(tool, "Edit") == 0 || strcmp(tool, "MultiEdit") == 0;
    *folder = strcmp(tool, "Glob") == 0 || strcmp(tool, "Grep") == 0;
    return *write || *folder || strcmp(tool, "Read") == 0 || strcmp(tool, "ReadMediaFile") == 0;
}

static bool within_real(const char *abs, const char *dir)
{
    if (dir == NULL)
        return false;
    char *real = NULL;
    bool in =
        agti_path_real(dir, &real) == AGT_OK && real != NULL && agti_path_is_within(abs, real);
    free(real);
    return in || agti_path_is_within(abs, dir);
}

/* Whether abs (resolved) lies in a folder the session admits for this
 * access: the workspace (checked by the caller), the allowed directories
 * and writable roots, for reading also the readable folders and the task
 * log folder; the plan file by its name. */
static bool admitted(const agt_session *s, const char *abs, const char *lex, bool write)
{
    size_t n = 0;
    const char *const *dirs = agti_session_allowed_dirs(s, &n);
    for (size_t i = 0; i < n; i++)
        if (agti_path_is_within(abs, dirs[i]))
            return true;
    const char *pf = s->policy != NULL ? s->policy->plan_file : NULL;
    if (pf != NULL && ((lex != NULL && strcmp(lex, pf) == 0) || strcmp(abs, pf) == 0))
        return true;
    /* The task log folder is read-only in every mode: a write there is not
     * for approval but refused by the tools. */
    if (s->bg != NULL && within_real(abs, s->bg->log_dir))
        return true;
    if (write)
        return false;
    dirs = agti_session_readable_dirs(s, &n);
    for (size_t i = 0; i < n; i++)
        if (agti_path_is_within(abs, dirs[i]))
            return true;
    return false;
}

/* The folder to admit for abs: the folder a Glob or Grep searches, else the
 * file's folder; the nearest existing one when it does not exist yet (a
 * Write that creates folders). */
static char *folder_of(const char *abs, bool folder)
{
    struct stat st;
    char *d = agti_strdup(abs);
    if (d == NULL)
        return NULL;
    if (folder && stat(d, &st) == 0 && S_ISDIR(st.st_mode))
        return d;
    do {
        char *slash = strrchr(d, '/');
        if (slash == NULL || slash == d) {
            d[1] = '\0';
            break;
        }
        *slash = '\0';
    } while (stat(d, &st) != 0 || !S_ISDIR(st.st_mode));
    return d;
}

int agti_outside_check(agt_session *s, agt_call *call)
{
    free(call->outside_dir);
    call->outside_dir = NULL;
    call->outside_admitted = false;
    bool write, folder;
    if (!file_tool(agt_call_tool(call), &write, &folder))
        return AGT_OK;
    const char *path = json_string_value(json_object_get(agti_call_args_json(call), "path"));
    if (path == NULL || path[0] == '\0')
        return AGT_OK; /* Glob/Grep search the workspace; the tools say what is missing */
    char *rel = NULL, *abs = NULL;
    if (agti_policy_path(s->root, path, &rel, &abs) != AGT_OK)
        return AGT_ENOMEM;
    char *lex = NULL;
    if (rel == NULL && path[0] != '~') {
        char *joined = NULL;
        if (agti_path_absolute(s->root, NULL, path, &joined) == AGT_OK) {
            lex = agti_path_normalize(joined);
            free(joined);
        }
    }
    int rc = AGT_OK;
    if (rel == NULL && abs != NULL && !admitted(s, abs, lex, write)) {
        call->outside_dir = folder_of(abs, folder);
        call->outside_write = write;
        if (call->outside_dir == NULL) {
            rc = agti_oom();
        } else if (!folder && agti_sensitive_match(agti_session_sensitive(s), abs, NULL)) {
            /* no question for a file the tools refuse anyway: the tool
             * runs and says it is sensitive */
            call->outside_admitted = true;
        }
    }
    free(rel);
    free(abs);
    free(lex);
    return rc;
}

char *agti_outside_reason(const agt_session *s, const agt_call *call)
{
    const char *path = json_string_value(json_object_get(agti_call_args_json(call), "path"));
    char *rel = NULL, *abs = NULL;
    if (agti_policy_path(s->root, path, &rel, &abs) != AGT_OK)
        return NULL;
    char *why;
    if (call->outside_write)
        why = agti_aprintf("%s would change %s, which is outside the workspace %s and every "
                           "folder added to the session; approving it for the session adds %s "
                           "as a writable root for the file tools and the sandboxed commands",
                           agt_call_tool(call), abs, s->root, call->outside_dir);
    else
        why = agti_aprintf("%s would read %s, which is outside the workspace %s and every "
                           "folder added to the session; approving it for the session adds %s "
                           "as a folder the file tools may read (not write)",
                           agt_call_tool(call), abs, s->root, call->outside_dir);
    free(rel);
    free(abs);
    return why;
}

int agti_outside_add_root(agt_session *s, const char *dir, bool write)
{
    if (write)
        return agt_session_add_writable_root(s, dir);
    return agti_session_add_readable_dir(s, dir);
}

json_t *agti_outside_json(const char *dir, bool write)
{
    return json_pack("{s:s, s:s}", "folder", dir, "access", write ? "write" : "read");
}

const char *agti_outside_of_request(const json_t *j, bool *write)
{
    const json_t *o = json_object_get(j, "outside");
    const char *dir = json_string_value(json_object_get(o, "folder"));
    const char *access = json_string_value(json_object_get(o, "access"));
    *write = access != NULL && strcmp(access, "write") == 0;
    return dir;
}

/* A folder that is gone since it was admitted is not admitted again (as
 * agti_gate_add_outside_root treats it); other errors stop the copy. */
static int copied(int rc)
{
    return rc == AGT_ENOTFOUND || rc == AGT_EINVAL ? AGT_OK : rc;
}

int agti_outside_copy_roots(agt_session *dst, const agt_session *src)
{
    int rc = AGT_OK;
    size_t n = 0;
    const agti_sb_settings *sst = src->sandbox;
    for (size_t i = 0; rc == AGT_OK && sst != NULL && i < sst->nroots; i++)
        rc = copied(agt_session_add_writable_root(dst, sst->roots[i]));
    const char *const *dirs = agti_session_allowed_dirs(src, &n);
    for (size_t i = 0; rc == AGT_OK && i < n; i++)
        rc = copied(agt_session_add_allowed_dir(dst, dirs[i]));
    dirs = agti_session_readable_dirs(src, &n);
    for (size_t i = 0; rc == AGT_OK && i < n; i++)
        rc = copied(agti_session_add_readable_dir(dst, dirs[i]));
    return rc;
}
