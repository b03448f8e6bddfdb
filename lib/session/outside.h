/* Internal: file tool paths outside every folder of the session
 * (outside.c), an approval matter shared by the gate, the pending list and
 * the answers. */
#ifndef AGT_LIB_SESSION_OUTSIDE_H
#define AGT_LIB_SESSION_OUTSIDE_H

#include <jansson.h>
#include <stdbool.h>

#include "agenttools/session.h"

/*
 * Sets call->outside_dir (the folder to admit) and outside_write when the
 * call is a file tool's (Read, Write, Edit, MultiEdit, Glob, Grep,
 * ReadMediaFile) whose path resolves outside the workspace and every
 * folder the session admits for that access; else clears them. A
 * sensitive file outside is admitted at once (call->outside_admitted): the
 * tool refuses it with its own message. AGT_OK or AGT_ENOMEM.
 */
int agti_outside_check(agt_session *s, agt_call *call);
/* Why such a call asks, naming the path and what approving it for the
 * session adds (malloc'd; NULL on OOM). */
char *agti_outside_reason(const agt_session *s, const agt_call *call);
/* Approve for the session: dir becomes a writable root (write) or a
 * folder the file tools read. AGT_OK, or the error of the add. */
int agti_outside_add_root(agt_session *s, const char *dir, bool write);
/* The folder an approval request or pending item j asks to admit (its
 * "outside" member; borrowed from j) and whether for writing; NULL when it
 * asks none. */
const char *agti_outside_of_request(const json_t *j, bool *write);
/* Gives dst (a new sub-agent's session) the folders src admits beyond the
 * workspace: allowed folders, writable roots, read-only folders (a folder
 * gone since is skipped). AGT_OK, AGT_ENOMEM. */
int agti_outside_copy_roots(agt_session *dst, const agt_session *src);
/* {"folder": dir, "access": "write"|"read"} for requests and the pending
 * list (new reference; NULL on OOM). */
json_t *agti_outside_json(const char *dir, bool write);

#endif
