/* Session settings of the workspace file tools: directories admitted
 * outside the root, and limits that override the tools' defaults. */
#ifndef AGT_LIB_SESSION_FS_SETTINGS_H
#define AGT_LIB_SESSION_FS_SETTINGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agenttools/session.h"

#define AGTI_FILE_LIMIT_MAX 6 /* highest AGT_FILE_LIMIT_* value */

typedef struct agti_fs_settings {
    char **allowed; /* absolute, symlinks resolved */
    size_t nallowed;
    char **readable; /* read only for the file tools: absolute, resolved */
    size_t nreadable;
    int64_t limits[AGTI_FILE_LIMIT_MAX + 1]; /* 0: the tool's default */
    bool links_in_place;                     /* agt_session_set_hardlink_writes */
    struct agti_sensitive *sensitive;        /* NULL: the built-in policy */
    bool fetch_private;                      /* FetchURL may reach private addresses */
    unsigned edit_options;                   /* agt_session_set_edit_options */
} agti_fs_settings;

void agti_fs_settings_free(agti_fs_settings *fs);
/* The session's value of limit which, or dflt when the host set none. */
int64_t agti_session_file_limit(const agt_session *s, int which, int64_t dflt);
/* Whether Write and Edit rewrite a file with several names in place. */
bool agti_session_hardlinks_in_place(const agt_session *s);
/* The AGT_EDIT_* flags the host set (0 by default). */
unsigned agti_session_edit_options(const agt_session *s);
/* Checks a host-given folder (not NULL, absolute, an existing directory)
 * and gives its realpath in *out (malloc'd); errors name fn. AGT_OK,
 * AGT_EINVAL, AGT_ENOTFOUND, AGT_ENOMEM. */
int agti_session_real_dir(const char *fn, const agt_session *s, const char *dir, char **out);
/* Adds a folder the file tools read but do not write (a Read outside the
 * workspace approved for the session); dir is resolved and must be an
 * existing directory. AGT_OK, AGT_EINVAL, AGT_ENOTFOUND, AGT_ENOMEM. */
int agti_session_add_readable_dir(agt_session *s, const char *dir);
/* The read-only folders (borrowed; *n may be 0). */
const char *const *agti_session_readable_dirs(const agt_session *s, size_t *n);
/* The admitted directories (borrowed; *n may be 0). */
const char *const *agti_session_allowed_dirs(const agt_session *s, size_t *n);
/* The session's sensitive-file policy (sensitive_settings.c); NULL (the
 * built-in one) when the host changed nothing or s is NULL. */
const struct agti_sensitive *agti_session_sensitive(const agt_session *s);
/* Whether FetchURL may connect to loopback, link-local and private
 * addresses (agt_session_set_fetch_private). */
bool agti_session_fetch_private(const agt_session *s);
/* Gives dst (a sub-agent's session) src's sensitive-file policy and
 * FetchURL setting, so a sub-agent sees no more than its parent. AGT_OK,
 * AGT_ENOMEM. */
int agti_session_copy_secrets(agt_session *dst, const agt_session *src);
/* The settings block, created on first use; NULL when out of memory. */
agti_fs_settings *agti_session_fs_settings(agt_session *s);

#endif
