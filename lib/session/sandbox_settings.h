/* Internal: the session's sandbox settings (sandbox_settings.c) and the
 * pieces other session files call: the approval hooks, the save section,
 * and the per-command sandbox for Bash. */
#ifndef AGT_LIB_SESSION_SANDBOX_SETTINGS_H
#define AGT_LIB_SESSION_SANDBOX_SETTINGS_H

#include <jansson.h>
#include <stdbool.h>

#include "agenttools/sandbox.h"
#include "agenttools/session.h"
#include "dispatch/dispatch_internal.h"

struct agti_sandbox;

typedef struct agti_sb_settings {
    bool set; /* the host chose a policy (else the default applies) */
    int mode, network, enforce;
    bool auto_allow;
    char **roots; /* added writable roots: absolute, symlinks resolved */
    size_t nroots;
    /* only between load and commit: the file tools' read-only folders */
    char **readable;
    size_t nreadable;
} agti_sb_settings;

/* The mode, network and enforce values in force (defaults when unset). */
void agti_session_sandbox_policy(const agt_session *s, int *mode, int *network, int *enforce);

/*
 * The sandbox for one Bash command. disable: the call asked to run outside
 * the sandbox (and was approved): *out = NULL. Otherwise *out is the
 * prepared sandbox (NULL when the mode is off), *tmp_env "TMPDIR=<the
 * session's private tmp>" (malloc'd, NULL when no sandbox). Errors of
 * agti_sandbox_prepare (with require: AGT_EUNSUPPORTED naming the piece).
 */
int agti_session_command_sandbox(agt_session *s, bool disable, struct agti_sandbox **out,
                                 char **tmp_env);

/* ---- approval hooks (approval.c calls these; keep them self-contained) ---- */

/* A Bash call with dangerously_disable_sandbox true while the session has a
 * sandbox: the reason it must ask (malloc'd), always, in every mode. NULL:
 * not such a call. */
char *agti_sandbox_escape_reason(agt_session *s, agt_call *call);
/* Whether a Bash call may skip the question because it runs sandboxed
 * (auto-allow on, workspace-write or read-only enforced, network off). */
bool agti_sandbox_auto_allows(agt_session *s, agt_call *call);

/* ---- save section "sandbox" ---- */
int agti_sandbox_section_save(const agt_session *s, json_t **value);
int agti_sandbox_section_load(agt_session *s, json_t *value, void **tmp);
void agti_sandbox_section_commit(agt_session *s, void *tmp);
void agti_sandbox_section_discard(void *tmp);

#endif
