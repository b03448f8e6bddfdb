/*
 * Internal sandbox engine: confines a command (and every descendant) with the
 * kernel's own mechanisms, and says exactly which of them are in force.
 *
 * Linux: Landlock (writes only under the writable roots, reads and execution
 * everywhere, signals and abstract sockets scoped to the sandbox), a seccomp
 * BPF filter (no IP sockets when the network is off; no ptrace, mount, bpf,
 * io_uring, kexec, perf, new user namespaces, no TIOCSTI/TIOCLINUX input
 * into a terminal, ...), and a user + mount
 * namespace whose read-only bind mounts keep protected paths (.git, the
 * session's own files) read-only inside writable roots.
 *
 * Everything that allocates or can fail in an interesting way runs in the
 * parent (agti_sandbox_prepare): the Landlock ruleset is built there with its
 * path rules, the BPF program is compiled there, the mount list and id maps
 * are formatted there. The child, between fork and exec of a multi-threaded
 * host, only makes system calls on prepared data
 * (agti_sandbox_child_namespaces, agti_sandbox_child_restrict), which are
 * async-signal-safe.
 *
 * Other systems: agti_sandbox_probe reports supported = false and prepare
 * refuses a sandboxed policy with AGT_EUNSUPPORTED.
 *
 * The engine knows nothing of tools or sessions: callers pass absolute paths.
 */
#ifndef AGT_LIB_SANDBOX_H
#define AGT_LIB_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "core/core.h"

/* What the kernel (and this build) offers; probed once per process. */
typedef struct agti_sandbox_probe {
    bool supported;   /* the engine exists on this system (Linux) */
    int landlock_abi; /* 0: no Landlock */
    bool seccomp;     /* seccomp filters available and libseccomp compiled in */
    bool user_ns;     /* an unprivileged-style user namespace can be created */
    bool mount_ns;    /* a mount namespace (inside the user ns, or as root) */
    bool pid_ns;      /* a PID namespace (inside the user ns, or as root) */
    bool net_ns;      /* a network namespace (inside the user ns, or as root) */
    bool subreaper;   /* PR_SET_CHILD_SUBREAPER works */
    bool root;        /* the host runs as uid 0 */
} agti_sandbox_probe;

/* The cached probe (thread-safe; the first call forks short-lived children). */
const agti_sandbox_probe *agti_sandbox_probe_get(void);
/* The part of the probe that needs no child process: supported,
 * landlock_abi, seccomp and root are filled (the same values as in
 * agti_sandbox_probe_get's), the namespace and subreaper fields are false.
 * For decisions taken before any command runs (the default policy), so that
 * a program that never runs a command never pays for the whole probe. */
const agti_sandbox_probe *agti_sandbox_probe_basic(void);
/* Whether the whole probe has run in this process (tests). */
bool agti_sandbox_probe_ran(void);

/* Filesystem policies (same values as the public AGT_SANDBOX_*). */
enum { AGTI_SB_OFF = 0, AGTI_SB_READ_ONLY = 1, AGTI_SB_WORKSPACE_WRITE = 2 };

/* A path that stays read-only inside a writable root. When missing, a
 * placeholder (an empty folder when is_dir, else an empty file) is created
 * before the command runs so the read-only mount can cover it; when its
 * folder is missing too, the nearest missing ancestor is reserved (an empty
 * folder) and covered instead: for .git/hooks without .git, .git itself.
 * Placeholders are removed again once the last command using them has
 * ended (see agti_sandbox_release); a path the user had is never removed.
 * A path below a file or a symbolic link is listed as unprotected. */
typedef struct agti_sandbox_protect {
    const char *path; /* absolute */
    bool is_dir;
} agti_sandbox_protect;

typedef struct agti_sandbox_policy {
    int mode;     /* AGTI_SB_* */
    bool network; /* IP sockets allowed */
    bool require; /* refuse to prepare unless every piece is enforced */
    /* Folders writable in workspace-write (absolute, existing). */
    const char *const *writable;
    size_t nwritable;
    /* Private tmp folder, writable in every mode (absolute, existing); may
     * be NULL. */
    const char *tmp_dir;
    const agti_sandbox_protect *protect;
    size_t nprotect;
} agti_sandbox_policy;

/* What a prepared sandbox enforces (for status reports and tests). */
typedef struct agti_sandbox_enforced {
    int mode;
    bool network;
    int landlock_abi; /* 0: Landlock not applied */
    bool seccomp;
    bool user_ns, mount_ns;
    size_t protected_paths;   /* read-only mounts planned */
    size_t unprotected_paths; /* protected paths that could not be reserved */
} agti_sandbox_enforced;

typedef struct agti_sandbox agti_sandbox;

/*
 * Builds everything the child needs for one spawn. mode OFF gives a sandbox
 * that applies nothing (callers usually pass NULL to the process engine
 * instead). With require, a piece the kernel lacks (Landlock, seccomp, the
 * namespaces for protected paths) is AGT_EUNSUPPORTED naming it; without it,
 * the missing pieces are left out and agti_sandbox_enforced says so.
 * Errors: AGT_EINVAL (bad policy), AGT_EUNSUPPORTED, AGT_EIO (a root cannot
 * be opened, the filter cannot be built), AGT_ENOMEM.
 */
int agti_sandbox_prepare(agti_sandbox **out, const agti_sandbox_policy *pol);
/* Drops the reference prepare gave (agti_sandbox_release(sb, true)). */
void agti_sandbox_free(agti_sandbox *sb);
/* Another reference, for a process that runs in the sandbox: the process
 * engine takes one per spawn and keeps it until the command's processes
 * have all ended, since the placeholders of protected paths must stay
 * until then. Thread-safe. Returns sb. */
agti_sandbox *agti_sandbox_ref(const agti_sandbox *sb);
/* Drops a reference; the last one frees the sandbox and lets go of its
 * placeholders. all_gone false: processes of this holder may still run
 * (no PID namespace, a killed supervisor), so its placeholders are left in
 * place for good. Thread-safe. */
void agti_sandbox_release(agti_sandbox *sb, bool all_gone);
/* Waits until every placeholder removed so far has also been closed (the
 * last close, which can wait for the disk, is left to a short-lived thread
 * after the name is gone). For tests that count this process's descriptors;
 * not after fork() while one is pending. */
void agti_sandbox_settle(void);
void agti_sandbox_get_enforced(const agti_sandbox *sb, agti_sandbox_enforced *e);
/* Protected paths that could not be reserved (borrowed, *n entries). */
const char *const *agti_sandbox_unprotected(const agti_sandbox *sb, size_t *n);

/* clone() namespace flags the sandbox needs (CLONE_NEWUSER, CLONE_NEWNS);
 * the process engine adds CLONE_NEWPID for supervision. */
unsigned long agti_sandbox_clone_flags(const agti_sandbox *sb);

/* A failure in the child: which step, and errno. */
typedef struct agti_sandbox_err {
    int step; /* AGTI_SB_STEP_* */
    int err;
} agti_sandbox_err;

enum {
    AGTI_SB_STEP_NONE = 0,
    AGTI_SB_STEP_IDMAP,    /* writing uid_map/gid_map */
    AGTI_SB_STEP_MOUNT,    /* read-only bind mounts */
    AGTI_SB_STEP_NNP,      /* PR_SET_NO_NEW_PRIVS */
    AGTI_SB_STEP_LANDLOCK, /* landlock_restrict_self */
    AGTI_SB_STEP_SECCOMP,  /* loading the BPF filter */
    AGTI_SB_STEP_CHDIR,    /* the working directory (process engine) */
    AGTI_SB_STEP_EXEC,     /* execve (process engine) */
    AGTI_SB_STEP_FORK,     /* forking the command under the supervisor */
    AGTI_SB_STEP_SETUP     /* descriptors, signals (process engine) */
};

/* "writing the user namespace id maps", ... */
const char *agti_sandbox_step_name(int step);

/*
 * In the child just created with agti_sandbox_clone_flags() (or NULL sb:
 * nothing): writes the id maps, makes the mount tree private, mounts the
 * protected paths read-only. Async-signal-safe. Returns 0, or -1 with *e
 * filled.
 */
int agti_sandbox_child_namespaces(const agti_sandbox *sb, agti_sandbox_err *e);

/*
 * In the first process of a new PID namespace that was created together
 * with a mount namespace (CLONE_NEWPID | CLONE_NEWNS), after
 * agti_sandbox_child_namespaces: makes the mount tree private unless the
 * sandbox did, and mounts the namespace's own /proc, so that $$, $! and
 * /proc/<pid> agree. Async-signal-safe. Returns 0, or -1 with *e filled.
 */
int agti_sandbox_child_pidns_proc(const agti_sandbox *sb, agti_sandbox_err *e);

/*
 * In the process about to exec: no_new_privs, Landlock, seccomp (in that
 * order). Inherited by every descendant, irrevocably. Async-signal-safe.
 * Returns 0, or -1 with *e filled.
 */
int agti_sandbox_child_restrict(const agti_sandbox *sb, agti_sandbox_err *e);

/* The probe as a JSON object text (malloc'd):
 * {"supported","landlock_abi","seccomp","user_namespace","mount_namespace",
 *  "pid_namespace","network_namespace","subreaper","root"}. */
char *agti_sandbox_probe_json(void);

#endif
