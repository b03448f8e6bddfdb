/*
 * Terminal injection (TIOCSTI, TIOCLINUX): a command must not push
 * characters into the input of the terminal the agent runs in, where the
 * user's shell would read and run them after the agent exits, outside the
 * sandbox.
 *
 * The test process forks a child that starts a session and makes a fresh
 * pty its controlling terminal (and its stdin), as a host started from a
 * terminal has one; the child runs the command through the process engine
 * and reports the command's output and how many bytes wait in the
 * terminal's input queue. The parent reads the pty master, where an
 * injected character would be echoed. Checked for every containment
 * (PID namespace, subreaper, process group) with and without the sandbox:
 * the command has no controlling terminal (/dev/tty: ENXIO, tty_nr 0), so
 * nothing reaches the queue; inside the sandbox the ioctls themselves fail
 * with EPERM from the seccomp filter, also on a pty the command made its
 * own controlling terminal and with the request's upper 32 bits set (the
 * kernel ignores them), while other terminal ioctls keep working.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "harness.h"
#include "proc/proc.h"
#include "sandbox/sandbox.h"

static char base[PATH_MAX - 64], ws[PATH_MAX], tmp[PATH_MAX], probe_py[PATH_MAX];

/* The command's side, in Python (ctypes passes the request as a 64-bit
 * unsigned long, as the C library's ioctl does). "tty [PATH]": the
 * controlling terminal's number, /dev/tty and TIOCSTI on it, then TIOCSTI
 * on the terminal opened by its path. "own": a pty of its own, made the
 * controlling terminal of a new session, and the ioctls on it. */
static const char probe_src[] =
    "import os, sys, fcntl, termios, errno, ctypes\n"
    "l = ctypes.CDLL(None, use_errno=True)\n"
    "def err(e): return errno.errorcode.get(e, str(e))\n"
    "def ioc(fd, req, arg):\n"
    "    r = l.ioctl(fd, ctypes.c_ulong(req), arg)\n"
    "    return 'ok' if r == 0 else err(ctypes.get_errno())\n"
    "X = ctypes.c_char(b'X')\n"
    "HI = 1 << 32\n"
    "out = []\n"
    "if sys.argv[1] == 'tty':\n"
    "    st = open('/proc/self/stat').read()\n"
    "    out.append('tty_nr=' + st[st.rindex(')') + 2:].split()[4])\n"
    "    try:\n"
    "        fd = os.open('/dev/tty', os.O_RDWR)\n"
    "        out.append('dev-tty=open sti=' + ioc(fd, termios.TIOCSTI, ctypes.byref(X)))\n"
    "    except OSError as e:\n"
    "        out.append('dev-tty=' + err(e.errno))\n"
    "    if len(sys.argv) > 2:\n"
    "        fd = os.open(sys.argv[2], os.O_RDWR)\n"
    "        out.append('path-sti=' + ioc(fd, termios.TIOCSTI, ctypes.byref(X)))\n"
    "        out.append('path-sti-hi=' + ioc(fd, termios.TIOCSTI | HI, ctypes.byref(X)))\n"
    "else:\n"
    "    m, s = os.openpty()\n"
    "    r, w = os.pipe()\n"
    "    pid = os.fork()\n"
    "    if pid == 0:\n"
    "        os.setsid()\n"
    "        fcntl.ioctl(s, termios.TIOCSCTTY, 0)\n"
    "        sel = ctypes.c_char(b'\\x02')\n"
    "        ws = ctypes.create_string_buffer(8)\n"
    "        res = ['ctty=' + ('yes' if l.tcgetsid(s) == os.getpid() else 'no'),\n"
    "               'sti=' + ioc(s, termios.TIOCSTI, ctypes.byref(X)),\n"
    "               'sti-hi=' + ioc(s, termios.TIOCSTI | HI, ctypes.byref(X)),\n"
    "               'linux=' + ioc(s, 0x541C, ctypes.byref(sel)),\n"
    "               'winsz=' + ioc(s, termios.TIOCGWINSZ, ws),\n"
    "               'winsz-hi=' + ioc(s, termios.TIOCGWINSZ | HI, ws)]\n"
    "        os.write(w, ' '.join(res).encode())\n"
    "        os._exit(0)\n"
    "    os.close(w)\n"
    "    os.waitpid(pid, 0)\n"
    "    out.append(os.read(r, 4096).decode())\n"
    "print(' '.join(out))\n";

typedef struct tty_run {
    int ctty_ok; /* the pty was the reporting child's controlling terminal */
    int rc;      /* agti_proc_run_to_completion's */
    int exit_code;
    int inq; /* bytes in the terminal's input queue after the command */
    char out[2048];
} tty_run;

static bool write_all(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        p += w;
        n -= (size_t)w;
    }
    return true;
}

static bool read_all(int fd, void *buf, size_t n)
{
    char *p = buf;
    while (n > 0) {
        ssize_t r = read(fd, p, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return false;
        p += r;
        n -= (size_t)r;
    }
    return true;
}

/* In the forked child: the pty becomes the controlling terminal, then the
 * command runs. Never returns. */
static void child(const char *slave, int mode, int supervise, const char *cmd, int res_fd,
                  int go_fd)
{
    tty_run r;
    memset(&r, 0, sizeof r);
    r.rc = AGT_EIO;
    r.exit_code = -1;
    r.inq = -1;
    int s = -1;
    if (setsid() >= 0)
        s = open(slave, O_RDWR); /* a session leader without one: it becomes ours */
    if (s >= 0) {
        ioctl(s, TIOCSCTTY, 0);
        /* Not canonical, so the queue counts every byte, not only whole
         * lines; echo stays on, so an injected byte shows on the master. */
        struct termios t;
        if (tcgetattr(s, &t) == 0) {
            t.c_lflag &= ~(tcflag_t)ICANON;
            t.c_cc[VMIN] = 0;
            t.c_cc[VTIME] = 0;
            tcsetattr(s, TCSANOW, &t);
        }
        dup2(s, 0);
        int dt = open("/dev/tty", O_RDWR | O_CLOEXEC);
        r.ctty_ok = tcgetsid(s) == getpid() && dt >= 0;
        if (dt >= 0)
            close(dt);
    }
    agti_sandbox *sb = NULL;
    if (s >= 0 && mode != AGTI_SB_OFF) {
        const char *roots[] = {ws};
        agti_sandbox_policy pol = {.mode = mode,
                                   .network = false,
                                   .require = true,
                                   .writable = roots,
                                   .nwritable = 1,
                                   .tmp_dir = tmp};
        r.rc = agti_sandbox_prepare(&sb, &pol);
        if (r.rc != AGT_OK)
            snprintf(r.out, sizeof r.out, "prepare: %s", agt_error_message());
    }
    if (s >= 0 && (mode == AGTI_SB_OFF || sb != NULL)) {
        agti_proc_opts o;
        agti_proc_opts_init(&o);
        o.shell = "/bin/bash";
        o.cwd = ws;
        o.sandbox = sb;
        o.supervise = supervise;
        o.timeout_ms = 30000;
        agti_proc *p = NULL;
        r.rc = agti_proc_run_to_completion(&p, cmd, &o);
        if (r.rc == AGT_OK) {
            char *out = NULL;
            agti_proc_output(p, &out, NULL);
            snprintf(r.out, sizeof r.out, "%s", out ? out : "");
            free(out);
            r.exit_code = agti_proc_exit_code(p);
        } else {
            snprintf(r.out, sizeof r.out, "run: %s", agt_error_message());
        }
        agti_proc_free(p);
        agti_sandbox_free(sb);
        agti_sandbox_settle();
        int n = -1;
        if (ioctl(s, FIONREAD, &n) == 0)
            r.inq = n;
    }
    write_all(res_fd, &r, sizeof r);
    char c;
    while (read(go_fd, &c, 1) < 0 && errno == EINTR) {
    }
    _exit(0);
}

/* Runs cmd (with "%s" replaced by the pty's path) on a pty that is the
 * controlling terminal of the process running the engine; *echo gets what
 * the master read within 300 ms after the command ended. */
static bool run_on_pty(int mode, int supervise, const char *fmt, tty_run *r, char *echo,
                       size_t echo_cap)
{
    memset(r, 0, sizeof *r);
    echo[0] = '\0';
    int m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    char slave[128];
    if (m < 0 || grantpt(m) != 0 || unlockpt(m) != 0 || ptsname_r(m, slave, sizeof slave) != 0) {
        t_diag("pty: %s", strerror(errno));
        if (m >= 0)
            close(m);
        return false;
    }
    char cmd[PATH_MAX * 2];
    char py[PATH_MAX + 32];
    snprintf(py, sizeof py, "python3 %s", probe_py);
    snprintf(cmd, sizeof cmd, fmt, py, slave);
    int res[2], go[2];
    if (pipe2(res, O_CLOEXEC) != 0 || pipe2(go, O_CLOEXEC) != 0) {
        close(m);
        return false;
    }
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        close(m);
        close(res[0]);
        close(go[1]);
        child(slave, mode, supervise, cmd, res[1], go[0]);
    }
    close(res[1]);
    close(go[0]);
    bool ok = pid > 0 && read_all(res[0], r, sizeof *r);
    size_t n = 0;
    for (;;) {
        struct pollfd pfd = {.fd = m, .events = POLLIN};
        if (!ok || poll(&pfd, 1, 300) <= 0 || !(pfd.revents & POLLIN))
            break;
        ssize_t got = read(m, echo + n, echo_cap - 1 - n);
        if (got <= 0)
            break;
        n += (size_t)got;
        if (n + 1 >= echo_cap)
            break;
    }
    echo[n] = '\0';
    close(go[1]);
    close(res[0]);
    if (pid > 0) {
        int st;
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
        }
    }
    close(m);
    return ok;
}

static const char *sup_name(int sup)
{
    switch (sup) {
    case AGTI_PROC_SUPERVISE_PIDNS:
        return "PID namespace";
    case AGTI_PROC_SUPERVISE_SUBREAPER:
        return "subreaper";
    default:
        return "process group";
    }
}

/* Whether TIOCSTI on one's own controlling terminal works outside the
 * sandbox: always before Linux 6.2 (no sysctl), else when
 * dev.tty.legacy_tiocsti is 1 or with CAP_SYS_ADMIN (root here). */
static bool host_tiocsti_works(void)
{
    if (geteuid() == 0)
        return true;
    FILE *f = fopen("/proc/sys/dev/tty/legacy_tiocsti", "r");
    if (f == NULL)
        return true;
    int v = 1;
    if (fscanf(f, "%d", &v) != 1)
        v = 1;
    fclose(f);
    return v != 0;
}

static void test_no_controlling_terminal(int mode, int sup)
{
    const char *where = mode == AGTI_SB_OFF ? "unsandboxed" : "sandboxed";
    tty_run r;
    char echo[256];
    /* Outside the sandbox the command has the host's rights: as root it
     * could TIOCSTI any terminal by its path (CAP_SYS_ADMIN), so only the
     * controlling terminal is tried there. */
    bool ok =
        run_on_pty(mode, sup, mode == AGTI_SB_OFF ? "%s tty" : "%s tty %s", &r, echo, sizeof echo);
    T_CHECK(ok && r.ctty_ok, "%s, %s: setup: the pty is the host's controlling terminal", where,
            sup_name(sup));
    T_EQ_INT(r.rc, AGT_OK, "%s, %s: the command ran", where, sup_name(sup));
    T_EQ_STR(r.out,
             mode == AGTI_SB_OFF ? "tty_nr=0 dev-tty=ENXIO\n"
                                 : "tty_nr=0 dev-tty=ENXIO path-sti=EPERM path-sti-hi=EPERM\n",
             "%s, %s: no controlling terminal (/dev/tty: ENXIO)%s", where, sup_name(sup),
             mode == AGTI_SB_OFF ? "" : ", TIOCSTI on the terminal's path: EPERM");
    T_EQ_INT(r.inq, 0, "%s, %s: nothing in the terminal's input queue", where, sup_name(sup));
    T_EQ_STR(echo, "", "%s, %s: nothing echoed on the master", where, sup_name(sup));
}

static void test_own_terminal(void)
{
    tty_run r;
    char echo[256];
    bool ok = run_on_pty(AGTI_SB_WORKSPACE_WRITE, AGTI_PROC_SUPERVISE_AUTO, "%s own", &r, echo,
                         sizeof echo);
    T_CHECK(ok && r.rc == AGT_OK, "sandboxed: the own-pty command ran");
    T_EQ_STR(r.out, "ctty=yes sti=EPERM sti-hi=EPERM linux=EPERM winsz=ok winsz-hi=ok\n",
             "sandboxed: TIOCSTI (also with the upper 32 bits set) and TIOCLINUX fail with EPERM "
             "on the command's own controlling terminal; TIOCGWINSZ works");
    T_EQ_INT(r.inq, 0, "sandboxed, own pty: nothing in the host terminal's input queue");
    T_EQ_STR(echo, "", "sandboxed, own pty: nothing echoed on the host terminal");

    /* The same outside the sandbox shows what the filter takes away: the
     * kernel ignores the upper bits, and a pty has no TIOCLINUX. */
    ok = run_on_pty(AGTI_SB_OFF, AGTI_PROC_SUPERVISE_AUTO, "%s own", &r, echo, sizeof echo);
    T_CHECK(ok && r.rc == AGT_OK, "unsandboxed: the own-pty command ran");
    T_EQ_STR(r.out,
             host_tiocsti_works()
                 ? "ctty=yes sti=ok sti-hi=ok linux=ENOTTY winsz=ok winsz-hi=ok\n"
                 : "ctty=yes sti=EIO sti-hi=EIO linux=ENOTTY winsz=ok winsz-hi=ok\n",
             "unsandboxed: the ioctls reach the kernel (control for the filter)");
    T_EQ_INT(r.inq, 0, "unsandboxed, own pty: nothing in the host terminal's input queue");
}

int main(void)
{
    const char *t = getenv("TMPDIR");
    snprintf(base, sizeof base, "%s/agt-sbtty-XXXXXX", t && t[0] == '/' ? t : "/tmp");
    if (mkdtemp(base) == NULL)
        return 1;
    snprintf(ws, sizeof ws, "%s/ws", base);
    snprintf(tmp, sizeof tmp, "%s/tmp", base);
    snprintf(probe_py, sizeof probe_py, "%s/probe.py", base);
    mkdir(ws, 0755);
    mkdir(tmp, 0700);
    FILE *f = fopen(probe_py, "w");
    if (f == NULL || fputs(probe_src, f) < 0 || fclose(f) != 0)
        return 1;

    const agti_sandbox_probe *p = agti_sandbox_probe_get();
    int ptm = -1;
    if (system("python3 -c pass >/dev/null 2>&1") != 0) {
        t_skip("python3 is needed to make the ioctls");
    } else if ((ptm = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0) {
        t_skip("no pty can be opened here");
    } else {
        close(ptm);
        int sups[] = {AGTI_PROC_SUPERVISE_PIDNS, AGTI_PROC_SUPERVISE_SUBREAPER,
                      AGTI_PROC_SUPERVISE_GROUP};
        bool sandbox = p->landlock_abi > 0 && p->seccomp;
        for (size_t i = 0; i < sizeof sups / sizeof sups[0]; i++) {
            if (sups[i] == AGTI_PROC_SUPERVISE_SUBREAPER && !p->subreaper) {
                t_skip("no subreaper here");
                continue;
            }
            /* A PID namespace needs root outside the sandbox, a user
             * namespace (or root) inside it. */
            bool pidns = sups[i] == AGTI_PROC_SUPERVISE_PIDNS;
            if (pidns && !(p->pid_ns && p->root))
                t_skip("unsandboxed: no PID namespace here");
            else
                test_no_controlling_terminal(AGTI_SB_OFF, sups[i]);
            if (sandbox && pidns && !(p->pid_ns && (p->user_ns || p->root)))
                t_skip("sandboxed: no PID namespace here");
            else if (sandbox)
                test_no_controlling_terminal(AGTI_SB_WORKSPACE_WRITE, sups[i]);
        }
        if (sandbox)
            test_own_terminal();
        else
            t_skip("this kernel lacks Landlock or seccomp: nothing to enforce");
    }

    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf %s", base);
    if (system(cmd) != 0)
        t_diag("cleanup of %s failed", base);
    return t_done();
}
