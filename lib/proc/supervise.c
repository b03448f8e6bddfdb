/*
 * Supervised spawning: the command runs under a process of ours that no
 * descendant can escape, and optionally inside the sandbox (lib/sandbox).
 *
 * PID namespace (preferred): the child is created by clone(CLONE_NEWPID) and
 * is the namespace's init. It forks the shell and waits; when the shell ends
 * it passes the shell's wait status up a pipe and exits, and the kernel kills
 * every process left in the namespace (setsid or daemonized ones included)
 * before the init's exit is visible to us. A SIGKILL to the init (timeout,
 * TaskStop, free) does the same at once. As init it ignores every signal it
 * has no handler for, so the TERM sent to the process group reaches the
 * shell and its group but not the init.
 *
 * Subreaper (no PID namespace permitted): the child makes itself a child
 * subreaper (PR_SET_CHILD_SUBREAPER: orphans of the command are re-parented
 * to it, never to the host) and puts the shell in a process group of its own.
 * The engine signals only the supervisor: TERM and CONT are relayed to the
 * shell's group; SIGUSR2 ("kill everything") and the shell's end make it
 * SIGKILL every process it can reach (the shell's group and, round after
 * round, every child of its own, which is where escaped daemons land) until
 * it has no child left; then it reports the status and exits. The host
 * process is never made a subreaper.
 *
 * Between clone and exec the code below runs in the child of a possibly
 * multi-threaded host: it only makes async-signal-safe calls on data the
 * parent prepared (no malloc, no stdio, no locks).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc_supervise.h"
#include "sandbox/sandbox_internal.h"

#ifdef __linux__
#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>

#ifndef SYS_close_range
#define SYS_close_range 436
#endif

/* ---- async-signal-safe helpers ------------------------------------------ */

static void report(int fd, int step, int err)
{
    agti_sandbox_err e = {step, err};
    if (fd >= 0) {
        ssize_t w;
        do {
            w = write(fd, &e, sizeof e);
        } while (w < 0 && errno == EINTR);
    }
}

static void close_above(int lo, int hi)
{
    if (lo > hi)
        return;
    if (syscall(SYS_close_range, (unsigned)lo, (unsigned)hi, 0) == 0)
        return;
    for (int fd = lo; fd <= hi && fd < 65536; fd++)
        close(fd);
}

/* Closes every descriptor from 3 up except keep[0..n) (ascending, >= 3). */
static void close_others(const int *keep, int n)
{
    int lo = 3;
    for (int i = 0; i < n; i++) {
        if (keep[i] < lo)
            continue;
        close_above(lo, keep[i] - 1);
        lo = keep[i] + 1;
    }
    close_above(lo, 0x7fffffff);
}

static void default_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_DFL;
    for (int sig = 1; sig < NSIG; sig++)
        if (sig != SIGKILL && sig != SIGSTOP)
            sigaction(sig, &sa, NULL); /* the C library's own signals fail: fine */
}

static void unblock_all(void)
{
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
}

static pid_t wait_any(int *st, int flags)
{
    pid_t r;
    do {
        r = waitpid(-1, st, flags);
    } while (r < 0 && errno == EINTR && !(flags & WNOHANG));
    return r;
}

/* The shell: working directory, sandbox, exec. Never returns. */
static void exec_shell(const agti_spawn_req *r, int err_fd)
{
    if (r->cwd && chdir(r->cwd) != 0) {
        report(err_fd, AGTI_SB_STEP_CHDIR, errno);
        _exit(127);
    }
    unblock_all();
    execve(r->shell, r->argv, r->envp);
    report(err_fd, AGTI_SB_STEP_EXEC, errno);
    _exit(127);
}

/* ---- subreaper supervisor --------------------------------------------- */

static volatile sig_atomic_t g_term, g_cont, g_kill;

static void on_signal(int sig)
{
    if (sig == SIGTERM || sig == SIGINT || sig == SIGHUP)
        g_term = 1;
    else if (sig == SIGCONT)
        g_cont = 1;
    else if (sig == SIGUSR2)
        g_kill = 1;
}

static size_t put_uint(char *s, unsigned long v)
{
    char tmp[24];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (size_t i = 0; i < n; i++)
        s[i] = tmp[n - 1 - i];
    return n;
}

/* SIGKILLs every child listed in /proc/self/task/<pid>/children; returns
 * how many were listed. */
static int kill_children(void)
{
    char path[64] = "/proc/self/task/";
    size_t n = strlen(path);
    n += put_uint(path + n, (unsigned long)getpid());
    memcpy(path + n, "/children", sizeof "/children");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    char buf[4096];
    int found = 0;
    unsigned long cur = 0;
    bool in = false;
    for (;;) {
        ssize_t got = read(fd, buf, sizeof buf);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        for (ssize_t i = 0; i < got; i++) {
            if (buf[i] >= '0' && buf[i] <= '9') {
                cur = cur * 10 + (unsigned long)(buf[i] - '0');
                in = true;
            } else if (in) {
                kill((pid_t)cur, SIGKILL);
                found++;
                cur = 0;
                in = false;
            }
        }
    }
    if (in) {
        kill((pid_t)cur, SIGKILL);
        found++;
    }
    close(fd);
    return found;
}

/* Kills everything below us and reaps it; the shell's status lands in
 * *shell_st if it is reaped here. */
static void kill_everything(pid_t shell, int *shell_st, bool *shell_done)
{
    for (;;) {
        if (!*shell_done)
            kill(-shell, SIGKILL);
        kill_children();
        int st;
        pid_t r = wait_any(&st, 0);
        if (r < 0)
            return; /* ECHILD: nothing left */
        if (r == shell) {
            *shell_st = st;
            *shell_done = true;
        }
    }
}

static void supervise_subreaper(pid_t shell, int st_fd)
{
    int shell_st = 0;
    bool shell_done = false;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    int sigs[] = {SIGTERM, SIGINT, SIGHUP, SIGCONT, SIGUSR2};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        sigaction(sigs[i], &sa, NULL);
    unblock_all();
    for (;;) {
        if (g_kill)
            break;
        if (g_term) {
            g_term = 0;
            kill(-shell, SIGTERM);
        }
        if (g_cont) {
            g_cont = 0;
            kill(-shell, SIGCONT);
        }
        int st;
        pid_t r = waitpid(-1, &st, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            break;
        if (r == shell) {
            shell_st = st;
            shell_done = true;
            break;
        }
        /* an adopted orphan ended: keep waiting for the shell */
    }
    kill_everything(shell, &shell_st, &shell_done);
    if (shell_done) {
        ssize_t w;
        do {
            w = write(st_fd, &shell_st, sizeof shell_st);
        } while (w < 0 && errno == EINTR);
    }
    _exit(0);
}

/* ---- PID namespace init -------------------------------------------------- */

static void supervise_pidns(pid_t shell, int st_fd)
{
    unblock_all(); /* as init, signals without a handler are ignored anyway */
    for (;;) {
        int st;
        pid_t r = waitpid(-1, &st, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            _exit(0);
        if (r == shell) {
            ssize_t w;
            do {
                w = write(st_fd, &st, sizeof st);
            } while (w < 0 && errno == EINTR);
            /* Our exit makes the kernel SIGKILL the rest of the namespace. */
            _exit(0);
        }
    }
}

/* The child right after clone. Never returns. */
static void child_main(const agti_spawn_req *r, int mode, int err_fd, int st_fd)
{
    default_signals();
    /* A session of its own: no controlling terminal, so nothing the command
     * runs can open /dev/tty, read the user's keystrokes or push input into
     * the terminal (TIOCSTI) for the user's shell to run after the agent
     * exits. The new session's process group is ours (pgid = pid), which
     * the engine signals. setsid only fails for a group leader, which a
     * fresh child is not (the parent no longer calls setpgid on it). */
    if (setsid() < 0) {
        report(err_fd, AGTI_SB_STEP_SETUP, errno);
        _exit(127);
    }
    int nullfd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (nullfd < 0 || dup2(nullfd, 0) < 0 || dup2(r->out_fd, 1) < 0 || dup2(r->out_fd, 2) < 0) {
        report(err_fd, AGTI_SB_STEP_SETUP, errno);
        _exit(127);
    }
    /* Namespaces, then the restrictions (Landlock forbids mounting; its
     * ruleset descriptor is still open), then every other descriptor goes.
     * The supervisor is confined as well: it only waits, kills and writes
     * to its status pipe. */
    agti_sandbox_err e = {0, 0};
    if (agti_sandbox_child_namespaces(r->sandbox, &e) != 0 ||
        (mode == AGTI_SUP_PIDNS && agti_sandbox_child_pidns_proc(r->sandbox, &e) != 0) ||
        agti_sandbox_child_restrict(r->sandbox, &e) != 0) {
        report(err_fd, e.step, e.err);
        _exit(127);
    }
    int keep[2], nk = 0;
    if (st_fd >= 0 && st_fd < err_fd)
        keep[nk++] = st_fd;
    keep[nk++] = err_fd;
    if (st_fd > err_fd)
        keep[nk++] = st_fd;
    close_others(keep, nk);
    if (mode == AGTI_SUP_NONE)
        exec_shell(r, err_fd);
    if (mode == AGTI_SUP_SUBREAPER && prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) {
        report(err_fd, AGTI_SB_STEP_FORK, errno);
        _exit(127);
    }
    long shell = agti_sb_raw_clone(0);
    if (shell < 0) {
        report(err_fd, AGTI_SB_STEP_FORK, errno);
        _exit(127);
    }
    if (shell == 0) {
        close(st_fd);
        if (mode == AGTI_SUP_SUBREAPER)
            setpgid(0, 0);
        exec_shell(r, err_fd);
    }
    close(err_fd); /* the shell's copy closes at exec: the parent sees EOF */
    if (mode == AGTI_SUP_SUBREAPER) {
        setpgid((pid_t)shell, (pid_t)shell); /* both sides, so no signal misses it */
        supervise_subreaper((pid_t)shell, st_fd);
    }
    supervise_pidns((pid_t)shell, st_fd);
}

/* A pipe with both ends above the standard descriptors, close-on-exec. */
static int pipe_above_stdio(int fds[2])
{
    if (pipe2(fds, O_CLOEXEC) != 0)
        return -1;
    for (int i = 0; i < 2; i++) {
        if (fds[i] <= 2) {
            int nfd = fcntl(fds[i], F_DUPFD_CLOEXEC, 3);
            close(fds[i]);
            fds[i] = nfd;
        }
    }
    if (fds[0] < 0 || fds[1] < 0) {
        if (fds[0] >= 0)
            close(fds[0]);
        if (fds[1] >= 0)
            close(fds[1]);
        return -1;
    }
    return 0;
}

int agti_spawn_supervised(const agti_spawn_req *r, int mode, pid_t *pid_out, int *status_fd)
{
    *pid_out = -1;
    *status_fd = -1;
    int errp[2], stp[2] = {-1, -1};
    if (pipe_above_stdio(errp) != 0)
        return agti_error(AGT_EIO, "process: pipe: %s", strerror(errno));
    if (mode != AGTI_SUP_NONE && pipe_above_stdio(stp) != 0) {
        int e = errno;
        close(errp[0]);
        close(errp[1]);
        return agti_error(AGT_EIO, "process: pipe: %s", strerror(e));
    }
    unsigned long flags = agti_sandbox_clone_flags(r->sandbox);
    if (mode == AGTI_SUP_PIDNS)
        flags |= CLONE_NEWPID | CLONE_NEWNS;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    long pid = agti_sb_raw_clone(flags);
    if (pid == 0)
        child_main(r, mode, errp[1], stp[1]);
    int clone_errno = errno;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    close(errp[1]);
    if (stp[1] >= 0)
        close(stp[1]);
    if (pid < 0) {
        close(errp[0]);
        if (stp[0] >= 0)
            close(stp[0]);
        return agti_error(AGT_EIO, "process: cannot create the command's process: %s",
                          strerror(clone_errno));
    }
    /* No setpgid here: the child's setsid would fail on a group leader.
     * The read below returns only once the child has started the shell
     * (EOF at exec, or its supervisor closed the pipe), long after its
     * setsid, so no signal to the group can precede it. */
    agti_sandbox_err e = {0, 0};
    ssize_t got;
    do {
        got = read(errp[0], &e, sizeof e);
    } while (got < 0 && errno == EINTR);
    close(errp[0]);
    if (got > 0) {
        int st;
        while (waitpid((pid_t)pid, &st, 0) < 0 && errno == EINTR) {
        }
        if (stp[0] >= 0)
            close(stp[0]);
        if (got != (ssize_t)sizeof e)
            return agti_error(AGT_EIO, "process: the command's process failed while starting");
        return agti_error(e.step == AGTI_SB_STEP_CHDIR ? AGT_ENOTFOUND : AGT_EIO,
                          "process: cannot start '%s -c ...': %s failed: %s", r->shell,
                          agti_sandbox_step_name(e.step), strerror(e.err));
    }
    if (stp[0] >= 0) {
        int fl = fcntl(stp[0], F_GETFL);
        if (fl >= 0)
            fcntl(stp[0], F_SETFL, fl | O_NONBLOCK);
    }
    *pid_out = (pid_t)pid;
    *status_fd = stp[0];
    return AGT_OK;
}

#else /* !__linux__ */

int agti_spawn_supervised(const agti_spawn_req *r, int mode, pid_t *pid_out, int *status_fd)
{
    (void)r;
    (void)mode;
    *pid_out = -1;
    *status_fd = -1;
    return agti_error(AGT_EUNSUPPORTED, "process: supervised spawning needs Linux");
}

#endif
