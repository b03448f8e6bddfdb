/*
 * Process engine: spawn, output capture, deadlines, reaping.
 *
 * Life of a process: spawn → running (reading the pipe, watching the pidfd,
 * applying the timeout) → the shell exits (seen with waitid(WNOWAIT), so its
 * zombie still pins the pid and the process group id) → leftover group
 * members are killed while the pgid is pinned → the pipe is drained until EOF
 * (bounded) → the zombie is reaped with waitpid(pid) → final state.
 */
#include <errno.h>
#include <fcntl.h>
#ifdef __linux__
#include <sched.h>
#endif
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proc.h"
#include "proc_capture.h"
#include "proc_supervise.h"
#include "sandbox/sandbox.h"

extern char **environ;

/* How long pipe EOF is awaited after the shell exited and its group was killed
 * (a writer outside the group may hold the pipe open). */
#define DRAIN_LINGER_MS 250
/* Exit is polled at this interval when no pidfd is available. */
#define FALLBACK_POLL_MS 10
/* Bytes read per pump before returning to the caller's loop. */
#define READ_BUDGET (4u * 1024 * 1024)
#define READ_CHUNK 65536
#define MAX_GRACE_MS (365LL * 24 * 3600 * 1000)

struct agti_proc {
    pid_t pid;
    int out_fd;    /* read end of the output pipe, -1 once closed */
    int pidfd;     /* -1 when unavailable or closed */
    int log_fd;    /* -1 when no log */
    int status_fd; /* supervisor: the shell's wait status arrives here; -1 none */
    int sup;       /* AGTI_SUP_* */
    char *log_path;
    agti_clock_fn clock;
    void *clock_ctx;

    int64_t started, ended;
    int64_t timeout_ms, grace_ms;
    int64_t deadline;    /* timeout deadline, -1 = none */
    int64_t kill_at;     /* KILL time while terminating, -1 = none */
    int64_t drain_until; /* after exit: give up waiting for EOF, -1 = none */
    bool terminating, killed_hard, exited, keep_group;
    agti_proc_state pending; /* final state when terminating */
    agti_proc_state state;
    int exit_code, sig;
    char *reason;

    size_t hard_cap;
    uint64_t total; /* raw bytes recorded */
    void (*on_output)(const char *data, size_t len, void *ctx);
    void *output_ctx;
    agti_capture cap;
    /* The sandbox it runs in, held until every process of the command has
     * ended (its placeholders must stay until then); NULL: none. */
    struct agti_sandbox *sb;
    bool sup_reported; /* the supervisor ended normally and sent the status */
};

/* Lets go of the sandbox. Every process of the command is gone when the
 * PID namespace's init has been reaped, or when the subreaper supervisor
 * reported (it kills every descendant before it does); otherwise some may
 * still run. */
static void drop_sandbox(agti_proc *p, bool reaped)
{
    if (p->sb == NULL)
        return;
    bool gone =
        reaped && (p->sup == AGTI_SUP_PIDNS || (p->sup == AGTI_SUP_SUBREAPER && p->sup_reported));
    agti_sandbox_release(p->sb, gone);
    p->sb = NULL;
}

int64_t agti_proc_monotonic_ms(void *ctx)
{
    (void)ctx;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void agti_proc_opts_init(agti_proc_opts *o)
{
    memset(o, 0, sizeof *o);
    o->grace_ms = -1;
}

const char *agti_proc_state_name(agti_proc_state s)
{
    switch (s) {
    case AGTI_PROC_RUNNING:
        return "running";
    case AGTI_PROC_COMPLETED:
        return "completed";
    case AGTI_PROC_FAILED:
        return "failed";
    case AGTI_PROC_TIMED_OUT:
        return "timed_out";
    case AGTI_PROC_KILLED:
        return "killed";
    }
    return "unknown";
}

static int64_t now_of(const agti_proc *p)
{
    return p->clock(p->clock_ctx);
}

/* ---- spawning ----------------------------------------------------------- */

static size_t env_name_len(const char *entry)
{
    const char *eq = strchr(entry, '=');
    return eq ? (size_t)(eq - entry) : 0;
}

/* Replaces the entry with the same name, or appends. */
static void env_set(char **envp, size_t *n, const char *entry)
{
    size_t nl = env_name_len(entry);
    for (size_t i = 0; i < *n; i++) {
        if (strncmp(envp[i], entry, nl + 1) == 0) {
            envp[i] = (char *)entry;
            return;
        }
    }
    envp[(*n)++] = (char *)entry;
}

/* The host's environment + the engine's defaults + the caller's entries.
 * The array is malloc'd; the strings are borrowed. */
static char **build_env(const char *const *extra)
{
    static const char *const defaults[] = {"NO_COLOR=1", "TERM=dumb", "GIT_TERMINAL_PROMPT=0",
                                           "PAGER=cat"};
    size_t nhost = 0, nextra = 0;
    while (environ && environ[nhost])
        nhost++;
    while (extra && extra[nextra])
        nextra++;
    size_t ndef = sizeof defaults / sizeof defaults[0];
    char **envp = malloc((nhost + ndef + nextra + 1) * sizeof *envp);
    if (envp == NULL)
        return NULL;
    size_t n = 0;
    for (size_t i = 0; i < nhost; i++)
        if (env_name_len(environ[i]) > 0)
            envp[n++] = environ[i];
    for (size_t i = 0; i < ndef; i++)
        env_set(envp, &n, defaults[i]);
    for (size_t i = 0; i < nextra; i++)
        env_set(envp, &n, extra[i]);
    envp[n] = NULL;
    return envp;
}

static int check_opts(const char *command, const agti_proc_opts *o)
{
    if (command == NULL || command[0] == '\0')
        return agti_error(AGT_EINVAL, "process: the command is empty");
    if (o->env) {
        for (size_t i = 0; o->env[i]; i++)
            if (env_name_len(o->env[i]) == 0)
                return agti_error(AGT_EINVAL,
                                  "process: environment entry '%s' is not of the form NAME=value",
                                  o->env[i]);
    }
    if (o->cwd) {
        struct stat st;
        if (stat(o->cwd, &st) != 0)
            return agti_error(errno == ENOENT ? AGT_ENOTFOUND : AGT_EIO,
                              "process: working directory '%s': %s", o->cwd, strerror(errno));
        if (!S_ISDIR(st.st_mode))
            return agti_error(AGT_EINVAL, "process: working directory '%s' is not a directory",
                              o->cwd);
    }
    if (o->timeout_ms < 0 || o->grace_ms < -1)
        return agti_error(AGT_EINVAL, "process: negative timeout or grace period");
    /* Beyond a year a grace period is a mistake, and now + grace must not
     * overflow. */
    if (o->grace_ms > MAX_GRACE_MS)
        return agti_error(AGT_EINVAL, "process: grace period of %lld ms is over the %lld ms limit",
                          (long long)o->grace_ms, (long long)MAX_GRACE_MS);
    return AGT_OK;
}

/* Moves fd above the standard descriptors (a host that closed 0..2 would get
 * them from pipe2, and the child's dup2 onto the same number would keep
 * FD_CLOEXEC set). */
static int fd_above_stdio(int fd)
{
    if (fd > 2)
        return fd;
    int nfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    close(fd);
    return nfd;
}

static int open_pipe(int fds[2])
{
    if (pipe2(fds, O_CLOEXEC) != 0)
        return agti_error(AGT_EIO, "process: pipe: %s", strerror(errno));
    fds[0] = fd_above_stdio(fds[0]);
    fds[1] = fd_above_stdio(fds[1]);
    if (fds[0] < 0 || fds[1] < 0) {
        int e = errno;
        if (fds[0] >= 0)
            close(fds[0]);
        if (fds[1] >= 0)
            close(fds[1]);
        return agti_error(AGT_EIO, "process: pipe: %s", strerror(e));
    }
    int fl = fcntl(fds[0], F_GETFL);
    if (fl < 0 || fcntl(fds[0], F_SETFL, fl | O_NONBLOCK) != 0) {
        int e = errno;
        close(fds[0]);
        close(fds[1]);
        return agti_error(AGT_EIO, "process: pipe: %s", strerror(e));
    }
    return AGT_OK;
}

/* The supervisor for these options (AGTI_SUP_*), or -1 with an error. */
static int pick_supervisor(const agti_proc_opts *o)
{
    const agti_sandbox_probe *pr = agti_sandbox_probe_get();
#ifdef CLONE_NEWUSER
    bool in_userns = (agti_sandbox_clone_flags(o->sandbox) & CLONE_NEWUSER) != 0;
#else
    bool in_userns = false; /* no namespaces on this system */
#endif
    bool pidns_ok = pr->pid_ns && (in_userns || pr->root);
    int want = o->keep_group ? AGTI_PROC_SUPERVISE_GROUP : o->supervise;
    switch (want) {
    case AGTI_PROC_SUPERVISE_GROUP:
        return AGTI_SUP_NONE;
    case AGTI_PROC_SUPERVISE_PIDNS:
        if (!pidns_ok)
            return agti_error(AGT_EUNSUPPORTED, "process: a PID namespace is not permitted here"),
                   -1;
        return AGTI_SUP_PIDNS;
    case AGTI_PROC_SUPERVISE_SUBREAPER:
        if (!pr->subreaper)
            return agti_error(AGT_EUNSUPPORTED, "process: PR_SET_CHILD_SUBREAPER is not available"),
                   -1;
        return AGTI_SUP_SUBREAPER;
    default:
        return pidns_ok ? AGTI_SUP_PIDNS : pr->subreaper ? AGTI_SUP_SUBREAPER : AGTI_SUP_NONE;
    }
}

static int do_spawn_supervised(agti_proc *p, const char *shell, const char *command,
                               const agti_proc_opts *o, int wfd, int mode)
{
    char **envp = build_env(o->env);
    if (envp == NULL)
        return agti_oom();
    char *argv[] = {(char *)shell, (char *)"-c", (char *)command, NULL};
    agti_spawn_req r = {.shell = shell,
                        .argv = argv,
                        .envp = envp,
                        .cwd = o->cwd,
                        .out_fd = wfd,
                        .sandbox = o->sandbox};
    int rc = agti_spawn_supervised(&r, mode, &p->pid, &p->status_fd);
    free(envp);
    if (rc == AGT_OK)
        p->sup = mode;
    return rc;
}

static int do_spawn(agti_proc *p, const char *shell, const char *command, const agti_proc_opts *o,
                    int wfd)
{
    int mode = pick_supervisor(o);
    if (mode < 0)
        return agt_error_code();
    if (mode != AGTI_SUP_NONE || o->sandbox != NULL)
        return do_spawn_supervised(p, shell, command, o, wfd, mode);
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    char **envp = build_env(o->env);
    if (envp == NULL)
        return agti_oom();
    int rc = posix_spawn_file_actions_init(&fa);
    if (rc != 0) {
        free(envp);
        return agti_error(AGT_ENOMEM, "process: posix_spawn_file_actions_init: %s", strerror(rc));
    }
    rc = posix_spawnattr_init(&attr);
    if (rc != 0) {
        posix_spawn_file_actions_destroy(&fa);
        free(envp);
        return agti_error(AGT_ENOMEM, "process: posix_spawnattr_init: %s", strerror(rc));
    }
    rc = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    if (rc == 0)
        rc = posix_spawn_file_actions_adddup2(&fa, wfd, 1);
    if (rc == 0)
        rc = posix_spawn_file_actions_adddup2(&fa, wfd, 2);
    if (rc == 0 && o->cwd)
        rc = posix_spawn_file_actions_addchdir_np(&fa, o->cwd);
#if defined(__GLIBC__) && __GLIBC_PREREQ(2, 34)
    /* Host descriptors opened without O_CLOEXEC must not leak into the child;
     * ours are all O_CLOEXEC, which covers C libraries without closefrom. */
    if (rc == 0)
        rc = posix_spawn_file_actions_addclosefrom_np(&fa, 3);
#endif
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    sigdelset(&all, SIGKILL);
    sigdelset(&all, SIGSTOP);
    /* A session of its own (no controlling terminal: see supervise.c), whose
     * process group is the one signalled; posix_spawn returns after the
     * exec, so it exists before any signal. */
#ifdef POSIX_SPAWN_SETSID
    if (rc == 0)
        rc = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK |
                                                 POSIX_SPAWN_SETSIGDEF);
#else
    /* No way to drop the terminal here: a process group of its own. */
    if (rc == 0)
        rc = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
                                                 POSIX_SPAWN_SETSIGDEF);
    if (rc == 0)
        rc = posix_spawnattr_setpgroup(&attr, 0);
#endif
    /* The host's blocked and ignored signals (SIGPIPE is often ignored) must not
     * be inherited: `yes | head` relies on SIGPIPE. */
    if (rc == 0)
        rc = posix_spawnattr_setsigmask(&attr, &none);
    if (rc == 0)
        rc = posix_spawnattr_setsigdefault(&attr, &all);
    if (rc == 0) {
        char *argv[] = {(char *)shell, (char *)"-c", (char *)command, NULL};
        rc = posix_spawn(&p->pid, shell, &fa, &attr, argv, envp);
        if (rc != 0)
            agti_error(AGT_EIO, "process: cannot start '%s -c ...': %s", shell, strerror(rc));
    } else {
        agti_error(AGT_EIO, "process: preparing the spawn: %s", strerror(rc));
    }
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&fa);
    free(envp);
    return rc == 0 ? AGT_OK : AGT_EIO;
}

static int open_pidfd(pid_t pid)
{
#ifdef SYS_pidfd_open
    long fd = syscall(SYS_pidfd_open, pid, 0);
    return fd >= 0 ? (int)fd : -1;
#else
    (void)pid;
    return -1;
#endif
}

int agti_proc_spawn(agti_proc **out, const char *command, const agti_proc_opts *opts)
{
    if (out == NULL)
        return agti_error(AGT_EINVAL, "process: out is NULL");
    *out = NULL;
    agti_proc_opts defaults;
    if (opts == NULL) {
        agti_proc_opts_init(&defaults);
        opts = &defaults;
    }
    int rc = check_opts(command, opts);
    if (rc != AGT_OK)
        return rc;

    agti_proc *p = calloc(1, sizeof *p);
    if (p == NULL)
        return agti_oom();
    p->out_fd = p->pidfd = p->log_fd = p->status_fd = -1;
    p->clock = opts->clock ? opts->clock : agti_proc_monotonic_ms;
    p->clock_ctx = opts->clock_ctx;
    p->timeout_ms = opts->timeout_ms;
    p->grace_ms = opts->grace_ms < 0 ? AGTI_PROC_DEFAULT_GRACE_MS : opts->grace_ms;
    p->hard_cap = opts->hard_cap ? opts->hard_cap : AGTI_PROC_DEFAULT_HARD_CAP;
    p->keep_group = opts->keep_group;
    p->on_output = opts->on_output;
    p->output_ctx = opts->output_ctx;
    p->deadline = p->kill_at = p->drain_until = p->ended = -1;
    p->exit_code = -1;
    p->state = AGTI_PROC_RUNNING;
    agti_capture_init(&p->cap, opts->output_cap ? opts->output_cap : AGTI_PROC_DEFAULT_OUTPUT_CAP);

    if (opts->log_path) {
        p->log_path = agti_strdup(opts->log_path);
        if (p->log_path == NULL) {
            agti_proc_free(p);
            return agti_oom();
        }
        p->log_fd = open(opts->log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (p->log_fd < 0) {
            rc = agti_error(AGT_EIO, "process: cannot open log file '%s': %s", opts->log_path,
                            strerror(errno));
            agti_proc_free(p);
            return rc;
        }
    }
    int fds[2];
    rc = open_pipe(fds);
    if (rc != AGT_OK) {
        agti_proc_free(p);
        return rc;
    }
    p->out_fd = fds[0];
    rc = do_spawn(p, opts->shell ? opts->shell : "/bin/sh", command, opts, fds[1]);
    close(fds[1]);
    if (rc != AGT_OK) {
        p->state = AGTI_PROC_FAILED; /* nothing to kill or reap */
        agti_proc_free(p);
        return rc;
    }
    p->sb = agti_sandbox_ref(opts->sandbox);
    if (!opts->no_pidfd)
        p->pidfd = open_pidfd(p->pid);
    p->started = now_of(p);
    if (p->timeout_ms > 0 && p->timeout_ms <= INT64_MAX / 2 - p->started)
        p->deadline = p->started + p->timeout_ms;
    *out = p;
    return AGT_OK;
}

/* ---- output ------------------------------------------------------------- */

static void log_write(agti_proc *p, const unsigned char *s, size_t n)
{
    while (p->log_fd >= 0 && n > 0) {
        ssize_t w = write(p->log_fd, s, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            /* A full disk must not stop the command; the log just ends here. */
            close(p->log_fd);
            p->log_fd = -1;
            return;
        }
        s += w;
        n -= (size_t)w;
    }
}

static void close_output(agti_proc *p)
{
    if (p->out_fd < 0)
        return;
    close(p->out_fd);
    p->out_fd = -1;
    agti_capture_finish(&p->cap);
}

static void begin_terminate(agti_proc *p, agti_proc_state why, char *reason);

static void record(agti_proc *p, const unsigned char *s, size_t n)
{
    bool over = false;
    if (p->hard_cap != SIZE_MAX && p->total + n > p->hard_cap) {
        n = (size_t)(p->hard_cap - p->total);
        over = true;
    }
    log_write(p, s, n);
    agti_capture_feed(&p->cap, (const char *)s, n);
    if (p->on_output != NULL && n > 0)
        p->on_output((const char *)s, n, p->output_ctx);
    p->total += n;
    if (over) {
        /* Closing our end makes the next write fail with SIGPIPE/EPIPE, which
         * stops most runaway writers before TERM even arrives. */
        close_output(p);
        begin_terminate(p, AGTI_PROC_KILLED,
                        agti_aprintf("output exceeded the hard cap of %zu bytes", p->hard_cap));
    }
}

/* Reads what the pipe holds now. Returns false on a read error. */
static bool read_available(agti_proc *p, size_t budget)
{
    unsigned char buf[READ_CHUNK];
    size_t got = 0;
    while (p->out_fd >= 0 && got < budget) {
        ssize_t r = read(p->out_fd, buf, sizeof buf);
        if (r > 0) {
            record(p, buf, (size_t)r);
            got += (size_t)r;
        } else if (r == 0) {
            close_output(p);
        } else if (errno == EINTR) {
            continue;
        } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
            break;
        } else {
            int e = errno;
            close_output(p);
            errno = e;
            return false;
        }
    }
    return true;
}

/* ---- termination and exit ------------------------------------------------ */

static void signal_group(agti_proc *p, int sig)
{
    /* Only called before the shell is reaped: its pid (alive or zombie) pins
     * the process group id, so this cannot hit a recycled group. */
    if (p->sup == AGTI_SUP_SUBREAPER) {
        /* The supervisor relays TERM and CONT to the shell's group; a KILL
         * would end the supervisor and free the orphans it holds, so it is
         * asked to kill everything itself (SIGUSR2) and then exits. */
        kill(p->pid, sig == SIGKILL ? SIGUSR2 : sig);
        return;
    }
    kill(-p->pid, sig);
}

static void begin_terminate(agti_proc *p, agti_proc_state why, char *reason)
{
    if (p->terminating) {
        free(reason);
        return;
    }
    if (p->exited) {
        /* The hard cap was crossed while draining after exit: nothing to
         * signal any more, but the verdict stands. */
        p->terminating = true;
        p->pending = why;
        free(p->reason);
        p->reason = reason;
        return;
    }
    p->terminating = true;
    p->pending = why;
    free(p->reason);
    p->reason = reason;
    signal_group(p, SIGTERM);
    /* A stopped group would keep TERM pending until continued. */
    signal_group(p, SIGCONT);
    if (p->grace_ms == 0) {
        signal_group(p, SIGKILL);
        p->killed_hard = true;
    } else {
        p->kill_at = now_of(p) + p->grace_ms;
    }
}

/* The state the process ends in, once its exit has been seen. */
static agti_proc_state final_state(const agti_proc *p)
{
    if (p->terminating)
        return p->pending;
    return p->exit_code == 0 ? AGTI_PROC_COMPLETED : AGTI_PROC_FAILED;
}

static void set_final_state(agti_proc *p)
{
    p->state = final_state(p);
}

static void reap(agti_proc *p)
{
    int st;
    pid_t r;
    do {
        r = waitpid(p->pid, &st, 0);
    } while (r < 0 && errno == EINTR);
    if (p->pidfd >= 0) {
        close(p->pidfd);
        p->pidfd = -1;
    }
    close_output(p);
    if (p->log_fd >= 0) {
        close(p->log_fd);
        p->log_fd = -1;
    }
    p->ended = now_of(p);
    set_final_state(p);
    drop_sandbox(p, r == p->pid);
}

static void note_status(agti_proc *p, const siginfo_t *si)
{
    if (p->status_fd >= 0) {
        /* A supervisor that ended normally passed the shell's wait status;
         * without it (the supervisor was killed) its own end is the story. */
        int st;
        ssize_t got;
        do {
            got = read(p->status_fd, &st, sizeof st);
        } while (got < 0 && errno == EINTR);
        close(p->status_fd);
        p->status_fd = -1;
        if (got == (ssize_t)sizeof st) {
            p->sup_reported = true;
            if (WIFEXITED(st)) {
                p->exit_code = WEXITSTATUS(st);
                p->sig = 0;
            } else {
                p->exit_code = -1;
                p->sig = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
            }
            return;
        }
    }
    if (si->si_code == CLD_EXITED) {
        p->exit_code = si->si_status;
        p->sig = 0;
    } else {
        p->exit_code = -1;
        p->sig = si->si_status;
    }
}

/* After the shell exited: leftovers of its group die (unless kept), then the
 * pipe is drained to EOF (bounded), then the zombie is reaped. */
static void after_exit(agti_proc *p)
{
    p->exited = true;
    /* Kill first: a leftover that writes without pause would otherwise keep
     * the drain below busy for as long as it lives. */
    if (!p->keep_group)
        signal_group(p, SIGKILL);
    read_available(p, READ_BUDGET);
    if (p->keep_group)
        close_output(p);
    else if (p->out_fd >= 0)
        p->drain_until = now_of(p) + DRAIN_LINGER_MS;
    if (p->out_fd < 0)
        reap(p);
}

/* Notices the shell's exit without reaping it. */
static void check_exit(agti_proc *p)
{
    if (p->exited)
        return;
    siginfo_t si;
    memset(&si, 0, sizeof si);
    int r;
    do {
        r = waitid(P_PID, (id_t)p->pid, &si, WEXITED | WNOHANG | WNOWAIT);
    } while (r < 0 && errno == EINTR);
    if (r < 0) {
        /* ECHILD: the host reaped it (SIGCHLD ignored, or a waitpid(-1) in
         * its handler). The status is lost; never signal the group again. */
        p->exited = true;
        p->exit_code = -1;
        if (!p->terminating) {
            free(p->reason);
            p->reason = agti_aprintf("exit status unavailable: %s", strerror(errno));
        }
        read_available(p, READ_BUDGET);
        close_output(p);
        if (p->pidfd >= 0) {
            close(p->pidfd);
            p->pidfd = -1;
        }
        if (p->log_fd >= 0) {
            close(p->log_fd);
            p->log_fd = -1;
        }
        p->ended = now_of(p);
        p->state = p->terminating ? p->pending : AGTI_PROC_FAILED;
        drop_sandbox(p, p->sup == AGTI_SUP_PIDNS); /* its namespace died with it */
        return;
    }
    if (si.si_pid == 0)
        return;
    note_status(p, &si);
    after_exit(p);
}

static void apply_deadlines(agti_proc *p, int64_t now)
{
    if (p->state != AGTI_PROC_RUNNING)
        return;
    if (p->exited) {
        if (p->drain_until >= 0 && now >= p->drain_until) {
            close_output(p);
            reap(p);
        }
        return;
    }
    if (!p->terminating && p->deadline >= 0 && now >= p->deadline)
        begin_terminate(p, AGTI_PROC_TIMED_OUT,
                        agti_aprintf("timed out after %lld ms", (long long)p->timeout_ms));
    if (p->terminating && !p->killed_hard && now >= p->kill_at) {
        signal_group(p, SIGKILL);
        p->killed_hard = true;
    }
}

int64_t agti_proc_next_deadline(const agti_proc *p)
{
    if (p == NULL || p->state != AGTI_PROC_RUNNING)
        return -1;
    if (p->exited)
        return p->drain_until;
    int64_t d = p->terminating ? (p->killed_hard ? -1 : p->kill_at) : p->deadline;
    if (p->pidfd < 0) {
        /* Without a pidfd nothing signals the exit: look again soon. */
        int64_t soon = now_of(p) + FALLBACK_POLL_MS;
        if (d < 0 || soon < d)
            d = soon;
    }
    return d;
}

size_t agti_proc_poll_fds(const agti_proc *p, struct pollfd *fds)
{
    size_t n = 0;
    if (p == NULL || p->state != AGTI_PROC_RUNNING)
        return 0;
    if (p->out_fd >= 0)
        fds[n++] = (struct pollfd){.fd = p->out_fd, .events = POLLIN};
    if (p->pidfd >= 0 && !p->exited)
        fds[n++] = (struct pollfd){.fd = p->pidfd, .events = POLLIN};
    return n;
}

int agti_proc_pump(agti_proc *p, int timeout_ms)
{
    if (p == NULL)
        return agti_error(AGT_EINVAL, "process: NULL handle");
    if (p->state != AGTI_PROC_RUNNING)
        return AGT_OK;
    int64_t now = now_of(p);
    apply_deadlines(p, now);
    if (p->state != AGTI_PROC_RUNNING)
        return AGT_OK;

    struct pollfd fds[2];
    size_t n = agti_proc_poll_fds(p, fds);
    int64_t wait = timeout_ms;
    int64_t dl = agti_proc_next_deadline(p);
    if (dl >= 0 && (wait < 0 || dl - now < wait))
        wait = dl - now < 0 ? 0 : dl - now;
    if (wait > INT32_MAX)
        wait = INT32_MAX;
    if (n == 0 && wait < 0)
        wait = FALLBACK_POLL_MS; /* nothing to wait on: should not happen; never hang */
    int pr = poll(fds, (nfds_t)n, (int)wait);
    if (pr < 0 && errno != EINTR) {
        int e = errno;
        agti_proc_kill_now(p, "internal error while polling");
        return agti_error(AGT_EIO, "process %d: poll: %s", (int)p->pid, strerror(e));
    }
    bool pid_ready = p->pidfd < 0;
    for (size_t i = 0; pr > 0 && i < n; i++) {
        if (fds[i].fd == p->pidfd && fds[i].revents)
            pid_ready = true;
    }
    if (!read_available(p, READ_BUDGET)) {
        int e = errno;
        agti_proc_kill_now(p, "reading the output failed");
        return agti_error(AGT_EIO, "process %d: read: %s", (int)p->pid, strerror(e));
    }
    if (p->exited) {
        if (p->out_fd < 0 && p->state == AGTI_PROC_RUNNING)
            reap(p);
    } else if (pid_ready || p->out_fd < 0) {
        check_exit(p);
    }
    apply_deadlines(p, now_of(p));
    return AGT_OK;
}

int agti_proc_wait(agti_proc *p, int64_t timeout_ms)
{
    if (p == NULL)
        return agti_error(AGT_EINVAL, "process: NULL handle");
    int64_t until = timeout_ms >= 0 ? now_of(p) + timeout_ms : -1;
    for (;;) {
        if (p->state != AGTI_PROC_RUNNING)
            return AGT_OK;
        int slice = -1;
        if (until >= 0) {
            int64_t left = until - now_of(p);
            if (left <= 0) {
                agti_proc_pump(p, 0);
                if (p->state != AGTI_PROC_RUNNING)
                    return AGT_OK;
                return agti_error(AGT_ETIMEOUT, "process %d still running after %lld ms",
                                  (int)p->pid, (long long)timeout_ms);
            }
            slice = left > INT32_MAX ? INT32_MAX : (int)left;
        }
        int rc = agti_proc_pump(p, slice);
        if (rc != AGT_OK)
            return rc;
    }
}

int agti_proc_run_to_completion(agti_proc **out, const char *command, const agti_proc_opts *opts)
{
    int rc = agti_proc_spawn(out, command, opts);
    if (rc != AGT_OK)
        return rc;
    return agti_proc_wait(*out, -1);
}

int agti_proc_stop(agti_proc *p, const char *reason)
{
    if (p == NULL)
        return agti_error(AGT_EINVAL, "process: NULL handle");
    if (p->state != AGTI_PROC_RUNNING || p->exited)
        return agti_error(
            AGT_ESTATE, "process %d has already finished (%s)", (int)p->pid,
            agti_proc_state_name(p->state == AGTI_PROC_RUNNING ? final_state(p) : p->state));
    if (p->terminating)
        return AGT_OK;
    begin_terminate(p, AGTI_PROC_KILLED,
                    agti_aprintf("stopped: %s", reason && reason[0] ? reason : "no reason given"));
    return AGT_OK;
}

void agti_proc_kill_now(agti_proc *p, const char *reason)
{
    if (p == NULL || p->state != AGTI_PROC_RUNNING)
        return;
    if (!p->terminating && !p->exited) {
        p->terminating = true;
        p->pending = AGTI_PROC_KILLED;
        free(p->reason);
        p->reason = agti_aprintf("%s", reason ? reason : "killed");
    }
    if (!p->exited) {
        signal_group(p, SIGKILL);
        siginfo_t si;
        memset(&si, 0, sizeof si);
        int r;
        do {
            r = waitid(P_PID, (id_t)p->pid, &si, WEXITED | WNOWAIT);
        } while (r < 0 && errno == EINTR);
        if (r == 0)
            note_status(p, &si);
        p->exited = true;
    } else if (!p->keep_group) {
        signal_group(p, SIGKILL);
    }
    close_output(p);
    reap(p);
}

/* ---- accessors ------------------------------------------------------------ */

agti_proc_state agti_proc_state_get(const agti_proc *p)
{
    return p ? p->state : AGTI_PROC_FAILED;
}

bool agti_proc_done(const agti_proc *p)
{
    return p == NULL || p->state != AGTI_PROC_RUNNING;
}

pid_t agti_proc_pid(const agti_proc *p)
{
    return p ? p->pid : -1;
}

int agti_proc_exit_code(const agti_proc *p)
{
    return p ? p->exit_code : -1;
}

int agti_proc_signal(const agti_proc *p)
{
    return p ? p->sig : 0;
}

const char *agti_proc_reason(const agti_proc *p)
{
    return p ? p->reason : NULL;
}

uint64_t agti_proc_output_bytes(const agti_proc *p)
{
    return p ? p->total : 0;
}

size_t agti_proc_capture_bytes(const agti_proc *p)
{
    return p ? agti_capture_held(&p->cap) : 0;
}

int64_t agti_proc_started_ms(const agti_proc *p)
{
    return p ? p->started : -1;
}

int64_t agti_proc_ended_ms(const agti_proc *p)
{
    return p ? p->ended : -1;
}

const char *agti_proc_log_path(const agti_proc *p)
{
    return p ? p->log_path : NULL;
}

int agti_proc_supervisor(const agti_proc *p)
{
    if (p == NULL || p->sup == AGTI_SUP_NONE)
        return AGTI_PROC_SUPERVISE_GROUP;
    return p->sup == AGTI_SUP_PIDNS ? AGTI_PROC_SUPERVISE_PIDNS : AGTI_PROC_SUPERVISE_SUBREAPER;
}

int agti_proc_output(const agti_proc *p, char **out, size_t *len)
{
    if (p == NULL || out == NULL)
        return agti_error(AGT_EINVAL, "process: NULL argument");
    return agti_capture_render(&p->cap, p->log_path, out, len);
}

bool agti_proc_output_cut(const agti_proc *p)
{
    return p != NULL && agti_capture_cut(&p->cap);
}

void agti_proc_free(agti_proc *p)
{
    if (p == NULL)
        return;
    if (p->pid > 0 && p->state == AGTI_PROC_RUNNING)
        agti_proc_kill_now(p, "process handle freed");
    if (p->out_fd >= 0)
        close(p->out_fd);
    if (p->pidfd >= 0)
        close(p->pidfd);
    if (p->log_fd >= 0)
        close(p->log_fd);
    if (p->status_fd >= 0)
        close(p->status_fd);
    drop_sandbox(p, false);
    agti_capture_free(&p->cap);
    free(p->log_path);
    free(p->reason);
    free(p);
}
