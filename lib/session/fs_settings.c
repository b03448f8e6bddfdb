/* Settings of the workspace file tools kept in the session. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "agenttools/sandbox.h"
#include "core/core.h"
#include "fs/fs.h"
#include "fs_settings.h"
#include "session_internal.h"

void agti_fs_settings_free(agti_fs_settings *fs)
{
    if (fs == NULL)
        return;
    for (size_t i = 0; i < fs->nallowed; i++)
        free(fs->allowed[i]);
    free(fs->allowed);
    for (size_t i = 0; i < fs->nreadable; i++)
        free(fs->readable[i]);
    free(fs->readable);
    agti_sensitive_free(fs->sensitive);
    free(fs);
}

agti_fs_settings *agti_session_fs_settings(agt_session *s)
{
    if (s->fs == NULL)
        s->fs = calloc(1, sizeof *s->fs);
    return s->fs;
}

static agti_fs_settings *settings(agt_session *s)
{
    return agti_session_fs_settings(s);
}

int agti_session_real_dir(const char *fn, const agt_session *s, const char *dir, char **out)
{
    *out = NULL;
    if (s == NULL || dir == NULL)
        return agti_error(AGT_EINVAL, "%s: %s is NULL", fn, s == NULL ? "session" : "dir");
    if (dir[0] != '/')
        return agti_error(AGT_EINVAL, "%s: '%s' is not an absolute path", fn, dir);
    char *real = realpath(dir, NULL);
    struct stat st;
    if (real == NULL || stat(real, &st) != 0 || !S_ISDIR(st.st_mode)) {
        int e = errno;
        free(real);
        if (e == ENOMEM)
            return agti_oom();
        return agti_error(AGT_ENOTFOUND, "%s: '%s' is not an existing directory", fn, dir);
    }
    *out = real;
    return AGT_OK;
}

/* Adds real to *v (takes it; a duplicate is freed). */
static int add_dir(char ***v, size_t *n, char *real)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp((*v)[i], real) == 0) {
            free(real);
            return AGT_OK;
        }
    char **grown = realloc(*v, (*n + 1) * sizeof *grown);
    if (grown == NULL) {
        free(real);
        return agti_oom();
    }
    *v = grown;
    (*v)[(*n)++] = real;
    return AGT_OK;
}

int agt_session_add_allowed_dir(agt_session *s, const char *dir)
{
    char *real = NULL;
    int vrc = agti_session_real_dir("agt_session_add_allowed_dir", s, dir, &real);
    if (vrc != AGT_OK)
        return vrc;
    agti_fs_settings *fs = settings(s);
    if (fs == NULL) {
        free(real);
        return agti_oom();
    }
    return add_dir(&fs->allowed, &fs->nallowed, real);
}

int agti_session_add_readable_dir(agt_session *s, const char *dir)
{
    char *real = NULL;
    int vrc = agti_session_real_dir("agt_session_add_readable_root", s, dir, &real);
    if (vrc != AGT_OK)
        return vrc;
    agti_fs_settings *fs = settings(s);
    if (fs == NULL) {
        free(real);
        return agti_oom();
    }
    return add_dir(&fs->readable, &fs->nreadable, real);
}

int agt_session_add_readable_root(agt_session *s, const char *dir)
{
    return agti_session_add_readable_dir(s, dir);
}

const char *const *agti_session_readable_dirs(const agt_session *s, size_t *n)
{
    *n = s && s->fs ? s->fs->nreadable : 0;
    return *n ? (const char *const *)s->fs->readable : NULL;
}

int agt_session_set_file_limit(agt_session *s, int which, int64_t value)
{
    static const int64_t max[AGTI_FILE_LIMIT_MAX + 1] = {
        0, 1000000, INT64_C(1) << 30, 1000000, 1000000, 1000000, INT64_C(1) << 32};
    if (s == NULL)
        return agti_error(AGT_EINVAL, "agt_session_set_file_limit: session is NULL");
    if (which < 1 || which > AGTI_FILE_LIMIT_MAX)
        return agti_error(AGT_EINVAL, "agt_session_set_file_limit: unknown limit %d", which);
    if (value < 0 || value > max[which])
        return agti_error(AGT_EINVAL,
                          "agt_session_set_file_limit: value %lld for limit %d is outside 0..%lld",
                          (long long)value, which, (long long)max[which]);
    agti_fs_settings *fs = settings(s);
    if (fs == NULL)
        return agti_oom();
    fs->limits[which] = value;
    return AGT_OK;
}

int64_t agti_session_file_limit(const agt_session *s, int which, int64_t dflt)
{
    if (s == NULL || s->fs == NULL || which < 1 || which > AGTI_FILE_LIMIT_MAX ||
        s->fs->limits[which] == 0)
        return dflt;
    return s->fs->limits[which];
}

const char *const *agti_session_allowed_dirs(const agt_session *s, size_t *n)
{
    *n = s && s->fs ? s->fs->nallowed : 0;
    return *n ? (const char *const *)s->fs->allowed : NULL;
}

int agt_session_set_hardlink_writes(agt_session *s, int mode)
{
    if (s == NULL)
        return agti_error(AGT_EINVAL, "agt_session_set_hardlink_writes: session is NULL");
    if (mode != AGT_HARDLINKS_BREAK && mode != AGT_HARDLINKS_IN_PLACE)
        return agti_error(AGT_EINVAL, "agt_session_set_hardlink_writes: unknown mode %d", mode);
    agti_fs_settings *fs = settings(s);
    if (fs == NULL)
        return agti_oom();
    fs->links_in_place = mode == AGT_HARDLINKS_IN_PLACE;
    return AGT_OK;
}

bool agti_session_hardlinks_in_place(const agt_session *s)
{
    return s != NULL && s->fs != NULL && s->fs->links_in_place;
}

int agt_session_set_edit_options(agt_session *s, unsigned int flags)
{
    if (s == NULL)
        return agti_error(AGT_EINVAL, "agt_session_set_edit_options: session is NULL");
    const unsigned known = (unsigned)AGT_EDIT_STRICT | (unsigned)AGT_EDIT_NO_STALE_CHECK |
                           (unsigned)AGT_EDIT_REQUIRE_READ;
    if ((flags & ~known) != 0)
        return agti_error(AGT_EINVAL, "agt_session_set_edit_options: unknown flags 0x%x",
                          flags & ~known);
    agti_fs_settings *fs = settings(s);
    if (fs == NULL)
        return agti_oom();
    fs->edit_options = flags;
    return AGT_OK;
}

unsigned agti_session_edit_options(const agt_session *s)
{
    return s != NULL && s->fs != NULL ? s->fs->edit_options : 0u;
}
