/* Internal view of a session, for providers and the dispatcher glue. */
#ifndef AGT_LIB_SESSION_INTERNAL_H
#define AGT_LIB_SESSION_INTERNAL_H

#include <jansson.h>

#include "agenttools/session.h"

struct agt_session {
    agt_registry *reg;
    char *root; /* absolute, symlinks resolved, no trailing slash (but "/") */
    int mode;
    int phase;
    json_t *todos;              /* array of {"title","status"} */
    struct agti_session_bg *bg; /* background tasks, cron table, events (events_internal.h) */
    struct agti_policy *policy; /* rules, pending approvals, hooks, plan file (policy.h) */
    struct agti_review *review; /* change set under review, comments (review_internal.h) */
    struct agti_fs_settings
        *fs; /* file tools: allowed dirs, limits (fs_settings.h); NULL: defaults */
    struct agti_sb_settings *sandbox; /* sandbox policy (sandbox_settings.h); NULL: defaults */
    struct agti_seen *seen; /* what Read and the edit tools saw of each file (seen.h); NULL: none */
};

/* Frees what agti_session_bg() created (events.c); NULL is a no-op. */
void agti_session_bg_free(struct agti_session_bg *bg);
/* Frees the file tool settings (fs_settings.c); NULL is a no-op. */
void agti_fs_settings_free(struct agti_fs_settings *fs);
/* Frees the sandbox settings (sandbox_settings.c); NULL is a no-op. */
void agti_sb_settings_free(struct agti_sb_settings *st);

#endif
