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
    json_t *todos; /* array of {"title","status"} */
    struct agti_session_bg *bg; /* background tasks, cron table, events (events_internal.h) */
    struct agti_policy *policy; /* rules, pending approvals, hooks, plan file (policy.h) */
    struct agti_review *review; /* change set under review, comments (review_internal.h) */
};

/* Frees what agti_session_bg() created (events.c); NULL is a no-op. */
void agti_session_bg_free(struct agti_session_bg *bg);

#endif
