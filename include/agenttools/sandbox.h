/*
 * libagenttools — the OS sandbox of Bash commands and background tasks.
 *
 * A session's commands run under one policy: a filesystem mode (read-only,
 * workspace-write, off), a network switch, and what to do when the kernel
 * lacks a piece (require or best effort). On Linux the sandbox is Landlock
 * (writes only under the writable roots), a seccomp filter (no IP sockets
 * while the network is off; no ptrace, mount, bpf, io_uring, kexec,
 * perf_event_open, new user namespaces) and a user + mount namespace whose
 * read-only bind mounts keep each writable root's .git folder and the
 * session's .agenttools folder read-only inside writable roots. Every descendant of a
 * command inherits it. docs/sandbox.md describes it in full.
 *
 * Other systems: agt_sandbox_probe() reports "supported": false, the default
 * mode is off, and asking for another mode is AGT_EUNSUPPORTED.
 */
#ifndef AGENTTOOLS_SANDBOX_H
#define AGENTTOOLS_SANDBOX_H

#include "common.h"
#include "session.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Filesystem policies of the sandbox. Append-only. */
enum agt_sandbox_mode {
    /** no sandbox: commands run with the host's rights */
    AGT_SANDBOX_OFF = 0,
    /** reads anywhere; writes only to /dev/null (and similar devices) and
     *  the session's private tmp folder ($TMPDIR of the command) */
    AGT_SANDBOX_READ_ONLY = 1,
    /** reads anywhere; writes under the writable roots: the workspace root,
     *  the session's tmp folder, folders added with
     *  agt_session_add_writable_root() or agt_session_add_allowed_dir();
     *  protected paths stay read-only (the default where the kernel has
     *  Landlock and seccomp) */
    AGT_SANDBOX_WORKSPACE_WRITE = 2
};

/** Network policies of the sandbox. Append-only. */
enum agt_sandbox_network {
    /** socket() for anything but AF_UNIX fails with EACCES (default) */
    AGT_SANDBOX_NETWORK_OFF = 0,
    /** IP sockets allowed */
    AGT_SANDBOX_NETWORK_ON = 1
};

/** What happens when the kernel lacks a piece of the sandbox. Append-only. */
enum agt_sandbox_enforce {
    /** run with the pieces the kernel has; agt_session_sandbox_status()
     *  says which (default) */
    AGT_SANDBOX_BEST_EFFORT = 0,
    /** refuse to run a command unless every piece is enforced */
    AGT_SANDBOX_REQUIRE = 1
};

/**
 * What this kernel and build offer, probed once per process (the first call
 * starts a few short-lived child processes).
 *
 * @param out_json receives {"supported": bool, "landlock_abi": int (0: none),
 *        "seccomp": bool, "user_namespace": bool, "mount_namespace": bool,
 *        "pid_namespace": bool, "network_namespace": bool, "subreaper": bool,
 *        "root": bool}; free with agt_free().
 * @return AGT_OK, AGT_EINVAL (out_json NULL), AGT_ENOMEM.
 */
AGT_EXTERN int agt_sandbox_probe(char **out_json);

/**
 * "off", "read-only", "workspace-write" for an AGT_SANDBOX_* mode; NULL for
 * an unknown value. Static string.
 */
AGT_EXTERN const char *agt_sandbox_mode_name(int mode);

/**
 * Parses a mode name as agt_sandbox_mode_name() prints it.
 *
 * @return AGT_OK with *mode set, AGT_EINVAL (NULL argument or unknown name;
 *         the message lists the valid ones).
 */
AGT_EXTERN int agt_sandbox_mode_parse(const char *name, int *mode);

/**
 * Sets the session's sandbox policy for the commands started after the
 * call (running ones keep theirs).
 *
 * @param mode an AGT_SANDBOX_* mode.
 * @param network AGT_SANDBOX_NETWORK_OFF or _ON.
 * @param enforce AGT_SANDBOX_BEST_EFFORT or _REQUIRE.
 * @return AGT_OK, AGT_EINVAL (s NULL or a value out of range),
 *         AGT_EUNSUPPORTED (a mode other than off on a system without
 *         sandbox support; or REQUIRE when this kernel lacks a piece the
 *         mode needs: the message names it), AGT_ENOMEM.
 */
AGT_EXTERN int agt_session_set_sandbox(agt_session *s, int mode, int network, int enforce);

/**
 * The session's sandbox policy (the default when none was set:
 * workspace-write, network off, best effort where the kernel has Landlock
 * and seccomp; else off). Any out pointer may be NULL.
 *
 * @return AGT_OK, AGT_EINVAL (s NULL).
 */
AGT_EXTERN int agt_session_sandbox(const agt_session *s, int *mode, int *network, int *enforce);

/**
 * Adds a writable root: commands in workspace-write may write there, and the
 * file tools admit it as agt_session_add_allowed_dir() does (one policy for
 * both). Its .git folder stays read-only.
 *
 * @param dir an absolute path of an existing directory; symbolic links are
 *        resolved now.
 * @return AGT_OK, AGT_EINVAL (s or dir NULL, dir relative), AGT_ENOTFOUND
 *         (not an existing directory), AGT_ENOMEM.
 */
AGT_EXTERN int agt_session_add_writable_root(agt_session *s, const char *dir);

/**
 * Adds a read-only folder of the file tools: Read, Glob, Grep and
 * ReadMediaFile read there without the question a path outside every folder
 * gets; Write, Edit and MultiEdit there ask as for a path outside (approving
 * that for the session makes it a writable root). The sandbox is not
 * changed (commands read everywhere already). Approving a read outside the
 * workspace for the session adds its folder this way. Saved and restored
 * with the session; adding a folder twice is a no-op.
 *
 * @param dir an absolute path of an existing directory; symbolic links are
 *        resolved now.
 * @return AGT_OK, AGT_EINVAL (s or dir NULL, dir relative), AGT_ENOTFOUND
 *         (not an existing directory), AGT_ENOMEM.
 */
AGT_EXTERN int agt_session_add_readable_root(agt_session *s, const char *dir);

/**
 * Auto-allows sandboxed commands: a Bash call that will run inside the
 * enforced workspace-write or read-only sandbox with the network off does
 * not ask for approval in manual mode. Deny and ask rules still apply; a
 * call with dangerously_disable_sandbox always asks. Default 0.
 *
 * @param on 1 to enable, 0 to disable.
 * @return AGT_OK, AGT_EINVAL (s NULL), AGT_ENOMEM.
 */
AGT_EXTERN int agt_session_set_sandbox_auto_allow(agt_session *s, int on);

/**
 * What the session's commands run under now, without starting one:
 * {"mode", "network", "enforce" (names), "auto_allow": bool,
 *  "sandboxed": bool (file writes are confined by the kernel),
 *  "landlock_abi": int (0: not applied), "seccomp": bool,
 *  "user_namespace": bool, "mount_namespace": bool (protected paths),
 *  "supervisor": "pid-namespace" | "subreaper" | "process-group",
 *  "writable_roots": [paths], "readable_roots": [paths] (read-only folders
 *  of the file tools, agt_session_add_readable_root)}.
 * With best effort on a kernel lacking a piece, the fields say what is
 * really applied: a command never runs unsandboxed while "sandboxed" is
 * true.
 *
 * @param out_json receives the object; free with agt_free().
 * @return AGT_OK, AGT_EINVAL (NULL argument), AGT_ENOMEM.
 */
AGT_EXTERN int agt_session_sandbox_status(agt_session *s, char **out_json);

#ifdef __cplusplus
}
#endif

#endif /* AGENTTOOLS_SANDBOX_H */
