/*
 * Internal process engine: runs a shell command in its own process group,
 * captures its merged stdout+stderr (head and tail in memory, everything in a
 * log file), enforces a timeout (TERM to the group, grace period, KILL) and a
 * hard output cap, and reaps by pid without touching the host's SIGCHLD.
 *
 * Everything is driven from the caller's thread: a process exposes its file
 * descriptors and next deadline so a host event loop can poll them and call
 * agti_proc_pump(p, 0); simple hosts call agti_proc_wait(). The background task
 * manager (agti_tasks_*) runs many processes the same way.
 *
 * Times are milliseconds of a monotonic clock. The clock can be injected
 * (agti_proc_opts.clock) so deadline logic is testable without sleeping.
 */
#ifndef AGT_LIB_PROC_H
#define AGT_LIB_PROC_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/core.h"

/* A monotonic clock in milliseconds; ctx is agti_proc_opts.clock_ctx. */
typedef int64_t (*agti_clock_fn)(void *ctx);

/* CLOCK_MONOTONIC in milliseconds (the default clock). */
int64_t agti_proc_monotonic_ms(void *ctx);

#define AGTI_PROC_DEFAULT_GRACE_MS 5000
#define AGTI_PROC_DEFAULT_OUTPUT_CAP 30000             /* characters kept for the model */
#define AGTI_PROC_DEFAULT_HARD_CAP (16u * 1024 * 1024) /* bytes of raw output */

typedef struct agti_proc_opts {
    /* Shell run as `shell -c command`; NULL = "/bin/sh". */
    const char *shell;
    /* Working directory of the child; NULL = the host's. Must be a directory. */
    const char *cwd;
    /* Extra environment entries "NAME=value", NULL-terminated; may be NULL.
     * They override the host's environment and the engine's defaults. */
    const char *const *env;
    /* File that receives the whole raw output stream (created or truncated,
     * mode 0600); NULL = no log. */
    const char *log_path;
    /* Wall time limit in ms; <= 0 = none. */
    int64_t timeout_ms;
    /* Time between TERM and KILL when terminating; < 0 = default (5000),
     * at most a year. */
    int64_t grace_ms;
    /* Characters of output kept in memory: the first cap/2 and the last
     * cap - cap/2, with a marker between them; 0 = default (30000). */
    size_t output_cap;
    /* Raw output bytes after which the process is killed (reason stated);
     * 0 = default (16 MiB); SIZE_MAX = unlimited. */
    size_t hard_cap;
    /* When the shell exits, members of its process group that are still
     * alive are killed (SIGKILL) unless this is true. */
    bool keep_group;
    /* Sandbox the command and every descendant run in (lib/sandbox);
     * borrowed until agti_proc_spawn returns; NULL = none. */
    const struct agti_sandbox *sandbox;
    /* How descendants are contained (AGTI_PROC_SUPERVISE_*); keep_group
     * implies AGTI_PROC_SUPERVISE_GROUP. */
    int supervise;
    /* Tests: do not use pidfd_open (exercise the waitid polling fallback). */
    bool no_pidfd;
    /* Called with each piece of raw output as it is recorded (what goes to
     * the log: nothing past the hard cap), from agti_proc_pump on the
     * pumping thread; it must not call back into the process. NULL = none. */
    void (*on_output)(const char *data, size_t len, void *ctx);
    void *output_ctx;
    /* Clock; NULL = agti_proc_monotonic_ms. Deadlines (timeout, grace, the
     * 250 ms wait for EOF after exit) are read from it, so a test clock that
     * never advances never fires them. */
    agti_clock_fn clock;
    void *clock_ctx;
} agti_proc_opts;

struct agti_sandbox;

/*
 * Containment of a command's descendants. AUTO (the default): a PID
 * namespace where permitted (as root, or inside the sandbox's user
 * namespace), else a subreaper supervisor, else the process group only.
 * With PIDNS and SUBREAPER no descendant outlives the call: setsid and
 * daemonized children die at the timeout, on stop and at the normal end
 * (see supervise.c). GROUP: the shell is our direct child and only its
 * process group is signalled (the behaviour before supervision).
 */
enum {
    AGTI_PROC_SUPERVISE_AUTO = 0,
    AGTI_PROC_SUPERVISE_GROUP = 1,
    AGTI_PROC_SUPERVISE_PIDNS = 2,
    AGTI_PROC_SUPERVISE_SUBREAPER = 3
};

/* Fills *o with the defaults (every field zero/NULL, grace_ms = -1). */
void agti_proc_opts_init(agti_proc_opts *o);

typedef enum agti_proc_state {
    AGTI_PROC_RUNNING = 0,
    AGTI_PROC_COMPLETED, /* exited with status 0 */
    AGTI_PROC_FAILED,    /* non-zero exit status or killed by a signal it did not get from us */
    AGTI_PROC_TIMED_OUT, /* the timeout ran out; terminated by us */
    AGTI_PROC_KILLED     /* stopped on request or by the output hard cap */
} agti_proc_state;

/* "running", "completed", "failed", "timed_out", "killed". */
const char *agti_proc_state_name(agti_proc_state s);

typedef struct agti_proc agti_proc;

/*
 * Starts `shell -c command` under its supervisor (posix_spawn for GROUP
 * without a sandbox, else clone; see supervise.c): own process group, stdin from
 * /dev/null, stdout and stderr on one pipe, every other descriptor closed,
 * the host's environment plus NO_COLOR=1 TERM=dumb GIT_TERMINAL_PROMPT=0
 * PAGER=cat plus opts->env. opts may be NULL (defaults).
 * Errors: AGT_EINVAL (NULL/empty command, bad env entry, cwd not a
 * directory), AGT_EIO (log file, pipe, spawn failure, a sandbox step that
 * failed in the child; message names it: the command then never ran),
 * AGT_EUNSUPPORTED (a supervisor asked for explicitly is not permitted),
 * AGT_ENOMEM.
 */
int agti_proc_spawn(agti_proc **out, const char *command, const agti_proc_opts *opts);

/*
 * Does the work that is ready: reads output, applies deadlines (timeout →
 * TERM to the group; grace over → KILL), notices exit, reaps. Waits at most
 * timeout_ms for something to happen (0 = never blocks; < 0 = until output,
 * exit or the next deadline). Returns AGT_OK (check agti_proc_state), or
 * AGT_EIO when reading or waiting failed unexpectedly (the process is then
 * killed and reaped, state killed).
 */
int agti_proc_pump(agti_proc *p, int timeout_ms);

/*
 * Pumps until the process has finished or timeout_ms has passed on the
 * process's clock (< 0 = no limit besides the process's own timeout).
 * Returns AGT_OK when finished, AGT_ETIMEOUT when still running.
 */
int agti_proc_wait(agti_proc *p, int64_t timeout_ms);

/* Spawn + wait without limit: the blocking helper for simple hosts/CLIs. */
int agti_proc_run_to_completion(agti_proc **out, const char *command, const agti_proc_opts *opts);

/*
 * Asks the process to stop: TERM to the group now, KILL after the grace
 * period (driven by pump). The final state is killed with "stopped: reason".
 * Returns AGT_OK, or AGT_ESTATE when it has already finished.
 */
int agti_proc_stop(agti_proc *p, const char *reason);

/* Kills the group at once (SIGKILL), then reaps (blocking, bounded by the
 * kernel delivering SIGKILL). State killed with the reason unless finished. */
void agti_proc_kill_now(agti_proc *p, const char *reason);

/* Fills fds[0..n) (n <= 2: output pipe, pidfd) to poll for POLLIN; returns n. */
size_t agti_proc_poll_fds(const agti_proc *p, struct pollfd *fds);
/* The next time pump has work without any fd event (ms on the process's
 * clock), or -1 when none. */
int64_t agti_proc_next_deadline(const agti_proc *p);

agti_proc_state agti_proc_state_get(const agti_proc *p);
bool agti_proc_done(const agti_proc *p);
pid_t agti_proc_pid(const agti_proc *p);
/* Exit status when it exited (0..255), else -1. */
int agti_proc_exit_code(const agti_proc *p);
/* Signal number that ended it, else 0. */
int agti_proc_signal(const agti_proc *p);
/* Why we ended it ("timed out after 60000 ms", "stopped: user asked",
 * "output exceeded the hard cap of 16777216 bytes"), or NULL. */
const char *agti_proc_reason(const agti_proc *p);
/* Raw bytes of output received (what went to the log). */
uint64_t agti_proc_output_bytes(const agti_proc *p);
/* Bytes of memory the captured output occupies now (head + tail buffers). */
size_t agti_proc_capture_bytes(const agti_proc *p);
int64_t agti_proc_started_ms(const agti_proc *p);
/* Finish time, or -1 while running. */
int64_t agti_proc_ended_ms(const agti_proc *p);
const char *agti_proc_log_path(const agti_proc *p);
/* The containment in force: AGTI_PROC_SUPERVISE_GROUP, _PIDNS or
 * _SUBREAPER (never AUTO). */
int agti_proc_supervisor(const agti_proc *p);

/*
 * The captured output as valid UTF-8 (invalid bytes replaced with U+FFFD):
 * everything when it fits the cap, else head + "\n[... N bytes (L lines) cut
 * ...]\n" + tail. Malloc'd into *out (length in *len if not NULL).
 * Returns AGT_OK or AGT_ENOMEM.
 */
int agti_proc_output(const agti_proc *p, char **out, size_t *len);
/* Whether agti_proc_output leaves bytes out, i.e. the output did not fit
 * the cap and the text carries the "[... cut ...]" marker. Callers use this,
 * never a search for the marker: a command may print that text itself. */
bool agti_proc_output_cut(const agti_proc *p);

void agti_proc_free(agti_proc *p);

/* The last max_bytes of a log file as valid UTF-8 (starts on a character
 * boundary). AGT_EIO when the file cannot be read. */
int agti_proc_read_log_tail(const char *path, size_t max_bytes, char **out, size_t *len);

/* ---- background task manager ---------------------------------------- */

typedef struct agti_tasks agti_tasks;

typedef struct agti_tasks_opts {
    /* Directory for task logs (<log_dir>/<id>.log); required. */
    const char *log_dir;
    /* Concurrently running tasks; 0 = default (16). */
    size_t max_running;
    /* Finished tasks kept for list/output; older ones are forgotten;
     * 0 = default (256). */
    size_t max_finished;
    /* Bytes of output tail carried by a finished event; 0 = default (2048). */
    size_t preview_bytes;
    agti_clock_fn clock;
    void *clock_ctx;
} agti_tasks_opts;

/* A snapshot of one task; strings are borrowed from the manager and valid
 * until the next call that changes it (start, pump, stop, wait, free). */
typedef struct agti_task_info {
    const char *id;
    const char *command;
    const char *description; /* "" when none */
    agti_proc_state state;
    int exit_code;      /* -1 when not exited */
    int signal;         /* 0 when not signalled */
    const char *reason; /* NULL when none */
    const char *log_path;
    pid_t pid;
    int64_t started_ms;
    int64_t ended_ms; /* -1 while running */
    uint64_t output_bytes;
} agti_task_info;

/* A "task finished" notification; owned by the caller, freed with
 * agti_task_events_free. */
typedef struct agti_task_event {
    char *id;
    agti_proc_state state;
    int exit_code;
    int signal;
    char *reason;  /* NULL when none */
    char *preview; /* last preview_bytes of output, valid UTF-8 */
    char *log_path;
} agti_task_event;

int agti_tasks_new(agti_tasks **out, const agti_tasks_opts *opts);
/* Kills every running task's group (SIGKILL) and reaps it; NULL is ignored. */
void agti_tasks_free(agti_tasks *m);

/*
 * Starts a background task. popts may be NULL; its log_path is replaced by
 * <log_dir>/<id>.log. The id ("bash-" + 8 hex digits) is written to
 * id_out (at least 14 bytes). AGT_ELIMIT when max_running tasks are running;
 * otherwise the errors of agti_proc_spawn.
 */
int agti_tasks_start(agti_tasks *m, const char *command, const char *description,
                     const agti_proc_opts *popts, char id_out[16]);

/* Pumps every running task, waiting at most timeout_ms (0 = no wait, < 0 =
 * until something happens). Finished tasks produce one event each. */
int agti_tasks_pump(agti_tasks *m, int timeout_ms);

/* Stops a running task (TERM, grace, KILL). AGT_ENOTFOUND for an unknown id,
 * AGT_ESTATE when it has already finished. */
int agti_tasks_stop(agti_tasks *m, const char *id, const char *reason);

/* Pumps until the task has finished or timeout_ms passed (0 = just look,
 * < 0 = no limit). AGT_OK finished, AGT_ETIMEOUT still running,
 * AGT_ENOTFOUND unknown id. */
int agti_tasks_wait(agti_tasks *m, const char *id, int64_t timeout_ms);

int agti_tasks_get(const agti_tasks *m, const char *id, agti_task_info *info);

/* Fills infos (caller's array of cap entries) newest first; *n receives how
 * many were written. active_only keeps running tasks only. */
void agti_tasks_list(const agti_tasks *m, bool active_only, agti_task_info *infos, size_t cap,
                     size_t *n);

/* Number of tasks running now / known (running + kept finished). */
size_t agti_tasks_running(const agti_tasks *m);
size_t agti_tasks_count(const agti_tasks *m);

/* The last max_bytes (0 = 32 KiB) of the task's log, valid UTF-8. */
int agti_tasks_tail(const agti_tasks *m, const char *id, size_t max_bytes, char **out, size_t *len);

/* Hands over the finished events collected so far (oldest first) and
 * clears them. *events is NULL when *n is 0. */
int agti_tasks_take_events(agti_tasks *m, agti_task_event **events, size_t *n);
void agti_task_events_free(agti_task_event *events, size_t n);

/* For a host event loop: fds of all running tasks (up to cap entries;
 * returns how many are needed) and the nearest deadline (-1 when none). */
size_t agti_tasks_poll_fds(const agti_tasks *m, struct pollfd *fds, size_t cap);
int64_t agti_tasks_next_deadline(const agti_tasks *m);

#endif
