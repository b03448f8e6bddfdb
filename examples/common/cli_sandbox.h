/*
 * The sandbox flags every example program takes (header only, so each CLI
 * includes it without another library):
 *
 *   --sandbox MODE     read-only | workspace-write | off (default: the
 *                      library's, workspace-write where the kernel can)
 *   --network on|off   IP networking for commands (default off)
 *   --sandbox-require  refuse to run commands unless every piece of the
 *                      sandbox is enforced (default: best effort)
 *   --add-dir DIR      an extra writable root (repeatable)
 *   --sandbox-auto-allow  sandboxed commands need no approval
 *
 * Public API only (agenttools/sandbox.h).
 */
#ifndef AGT_CLI_SANDBOX_H
#define AGT_CLI_SANDBOX_H

#include <agenttools/agenttools.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CLI_SANDBOX_USAGE                                                                          \
    "  --sandbox MODE   commands run read-only, workspace-write or off (default:\n"                \
    "                   workspace-write where the kernel supports it)\n"                           \
    "  --network on|off network for commands in the sandbox (default off)\n"                       \
    "  --sandbox-require  run no command unless the whole sandbox is enforced\n"                   \
    "  --sandbox-auto-allow  commands that run sandboxed need no approval\n"                       \
    "  --add-dir DIR    an extra folder commands and file tools may write (repeatable)\n"

#define CLI_SANDBOX_MAX_DIRS 32

typedef struct cli_sandbox {
    int mode, network, enforce, auto_allow; /* -1: not given */
    const char *dirs[CLI_SANDBOX_MAX_DIRS];
    int ndirs;
} cli_sandbox;

static inline void cli_sandbox_init(cli_sandbox *o)
{
    memset(o, 0, sizeof *o);
    o->mode = o->network = o->enforce = o->auto_allow = -1;
}

/* Whether argv[*i] is a sandbox flag: 1 consumed (and its value; *i points
 * at the last word used), 0 not ours, -1 a bad value (message in err). */
static inline int cli_sandbox_arg(cli_sandbox *o, int argc, char **argv, int *i, char *err,
                                  size_t errlen)
{
    const char *a = argv[*i];
    if (strcmp(a, "--sandbox-require") == 0) {
        o->enforce = AGT_SANDBOX_REQUIRE;
        return 1;
    }
    if (strcmp(a, "--sandbox-auto-allow") == 0) {
        o->auto_allow = 1;
        return 1;
    }
    if (strcmp(a, "--sandbox") != 0 && strcmp(a, "--network") != 0 && strcmp(a, "--add-dir") != 0)
        return 0;
    if (*i + 1 >= argc) {
        snprintf(err, errlen, "%s needs a value", a);
        return -1;
    }
    const char *v = argv[++*i];
    if (strcmp(a, "--sandbox") == 0) {
        if (agt_sandbox_mode_parse(v, &o->mode) != AGT_OK) {
            snprintf(err, errlen, "--sandbox %s: use read-only, workspace-write or off", v);
            return -1;
        }
    } else if (strcmp(a, "--network") == 0) {
        if (strcmp(v, "on") != 0 && strcmp(v, "off") != 0) {
            snprintf(err, errlen, "--network %s: use on or off", v);
            return -1;
        }
        o->network = strcmp(v, "on") == 0 ? AGT_SANDBOX_NETWORK_ON : AGT_SANDBOX_NETWORK_OFF;
    } else {
        if (o->ndirs >= CLI_SANDBOX_MAX_DIRS) {
            snprintf(err, errlen, "--add-dir: at most %d folders", CLI_SANDBOX_MAX_DIRS);
            return -1;
        }
        o->dirs[o->ndirs++] = v;
    }
    return 1;
}

/* Applies the flags to a session: AGT_OK, or the library's error with a
 * message in err. A relative --add-dir is taken from the current folder. */
static inline int cli_sandbox_apply(const cli_sandbox *o, agt_session *s, char *err, size_t errlen)
{
    int mode, network, enforce;
    /* Without a sandbox flag the session keeps its default policy, found
     * when a command first needs it: asking for it here probed the kernel
     * (four short-lived namespaced children) at every start, a Grep or
     * Read call included. */
    int flags = o->mode >= 0 || o->network >= 0 || o->enforce >= 0;
    if (flags)
        agt_session_sandbox(s, &mode, &network, &enforce);
    if (o->mode >= 0)
        mode = o->mode;
    if (o->network >= 0)
        network = o->network;
    if (o->enforce >= 0)
        enforce = o->enforce;
    int rc = flags ? agt_session_set_sandbox(s, mode, network, enforce) : AGT_OK;
    if (rc != AGT_OK) {
        snprintf(err, errlen, "sandbox: %s", agt_error_message());
        return rc;
    }
    if (o->auto_allow > 0)
        agt_session_set_sandbox_auto_allow(s, 1);
    for (int k = 0; k < o->ndirs; k++) {
        char abs[4096];
        const char *d = o->dirs[k];
        if (d[0] != '/' && realpath(d, abs) != NULL)
            d = abs;
        rc = agt_session_add_writable_root(s, d);
        if (rc != AGT_OK) {
            snprintf(err, errlen, "--add-dir %s: %s", o->dirs[k], agt_error_message());
            return rc;
        }
    }
    return AGT_OK;
}

/* Prints the probe and the session's sandbox status (for `info`). */
static inline void cli_sandbox_print(FILE *f, agt_session *s)
{
    char *probe = NULL, *status = NULL;
    if (agt_sandbox_probe(&probe) == AGT_OK)
        fprintf(f, "sandbox probe: %s\n", probe);
    if (s != NULL && agt_session_sandbox_status(s, &status) == AGT_OK)
        fprintf(f, "sandbox: %s\n", status);
    agt_free(probe);
    agt_free(status);
}

#endif
