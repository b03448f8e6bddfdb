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
    struct agti_policy *policy; /* rules, pending approvals, hooks, plan file (policy.h) */
};

#endif
