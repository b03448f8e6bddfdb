/*
 * Sandbox engine, for real on this kernel: the probe against independent
 * checks (printed into the log), writes outside the writable roots refused
 * by every route (file, folder, planted symlink, /proc/self/root, a
 * grandchild, a setsid daemon) with nothing appearing, writes inside
 * working, protected paths (.git/hooks even when missing, .git/config)
 * read-only, git commit / make / pytest / npm working in workspace-write,
 * TCP to 127.0.0.1 refused with the network off and working with it on,
 * AF_UNIX working, read-only refusing every write, seccomp refusing
 * mount/unshare -U/ptrace, signals scoped, outputs of ordinary commands
 * identical with and without the sandbox.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "harness.h"
#include "proc/proc.h"
#include "sandbox/sandbox.h"

/* The supervisor run_in asks for (AGTI_PROC_SUPERVISE_*). */
static int g_supervise = AGTI_PROC_SUPERVISE_AUTO;

static char base[PATH_MAX - 64], ws[PATH_MAX], outside[PATH_MAX], tmp[PATH_MAX];

/* A test name must stay on one line (TAP): newlines shown as '|'. */
static const char *flat(const char *s)
{
    static char buf[4][512];
    static int k;
    char *b = buf[k++ % 4];
    size_t i = 0;
    for (; s != NULL && s[i] != '\0' && i + 1 < sizeof buf[0]; i++)
        b[i] = s[i] == '\n' ? '|' : s[i];
    b[i] = '\0';
    return b;
}

static bool exists(const char *fmt, const char *a)
{
    char path[PATH_MAX * 2];
    snprintf(path, sizeof path, fmt, a);
    struct stat st;
    return lstat(path, &st) == 0;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    char *buf = calloc(1, 65536);
    size_t n = fread(buf, 1, 65535, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

typedef struct run_result {
    int rc; /* agti_proc_spawn's */
    int exit_code;
    char *out;
} run_result;

/* Runs cmd with bash in ws under a sandbox of mode/network (mode OFF: no
 * sandbox at all). */
static run_result run_in(int mode, bool network, const char *cmd)
{
    run_result r = {AGT_OK, -1, NULL};
    agti_sandbox *sb = NULL;
    if (mode != AGTI_SB_OFF) {
        char hooks[PATH_MAX + 16], config[PATH_MAX + 16], own[PATH_MAX + 16];
        snprintf(hooks, sizeof hooks, "%s/.git/hooks", ws);
        snprintf(config, sizeof config, "%s/.git/config", ws);
        snprintf(own, sizeof own, "%s/.agenttools", ws);
        agti_sandbox_protect prot[] = {{hooks, true}, {config, false}, {own, true}};
        const char *roots[] = {ws};
        agti_sandbox_policy pol = {.mode = mode,
                                   .network = network,
                                   .require = true,
                                   .writable = roots,
                                   .nwritable = 1,
                                   .tmp_dir = tmp,
                                   .protect = prot,
                                   .nprotect = 3};
        r.rc = agti_sandbox_prepare(&sb, &pol);
        if (r.rc != AGT_OK) {
            t_diag("prepare: %s", agt_error_message());
            return r;
        }
    }
    agti_proc_opts o;
    agti_proc_opts_init(&o);
    o.shell = "/bin/bash";
    o.cwd = ws;
    o.sandbox = sb;
    o.supervise = g_supervise;
    o.timeout_ms = 60000;
    char tmpenv[PATH_MAX + 8];
    snprintf(tmpenv, sizeof tmpenv, "TMPDIR=%s", tmp);
    const char *env[] = {tmpenv, NULL};
    o.env = env;
    agti_proc *p = NULL;
    r.rc = agti_proc_run_to_completion(&p, cmd, &o);
    agti_sandbox_free(sb);
    if (r.rc != AGT_OK) {
        t_diag("run '%s': %s", cmd, agt_error_message());
        agti_proc_free(p);
        return r;
    }
    agti_proc_output(p, &r.out, NULL);
    r.exit_code = agti_proc_exit_code(p);
    agti_proc_free(p);
    return r;
}

static run_result run_sb(const char *cmd)
{
    return run_in(AGTI_SB_WORKSPACE_WRITE, false, cmd);
}

static int independent_landlock_abi(void)
{
    long abi = syscall(444 /* landlock_create_ruleset */, NULL, 0, 1U);
    return abi > 0 ? (int)abi : 0;
}

static bool independent_userns(void)
{
    pid_t pid = fork();
    if (pid == 0)
        _exit(unshare(CLONE_NEWUSER) == 0 ? 0 : 1);
    int st;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static void test_probe(void)
{
    const agti_sandbox_probe *p = agti_sandbox_probe_get();
    char *j = agti_sandbox_probe_json();
    t_diag("sandbox probe: %s", j ? j : "(oom)");
    free(j);
    T_CHECK(p->supported, "probe: supported on Linux");
    T_EQ_INT(p->landlock_abi, independent_landlock_abi(), "probe: Landlock ABI matches the kernel");
    T_EQ_INT(p->user_ns, independent_userns(), "probe: user namespaces match an unshare test");
    T_EQ_INT(p->root, geteuid() == 0, "probe: root matches geteuid");
    bool seccomp_kernel = access("/proc/sys/kernel/seccomp/actions_avail", R_OK) == 0;
    T_EQ_INT(p->seccomp, seccomp_kernel, "probe: seccomp matches /proc/sys/kernel/seccomp");
}

static void test_outside(void)
{
    char cmd[PATH_MAX * 4];
    run_result r;

    snprintf(cmd, sizeof cmd, "echo x > %s/file; echo rc=$?", outside);
    r = run_sb(cmd);
    T_CHECK(r.out && strstr(r.out, "Permission denied") && strstr(r.out, "rc=1"),
            "write outside: refused (%s)", flat(r.out));
    T_CHECK(!exists("%s/file", outside), "write outside: nothing appears");
    free(r.out);

    snprintf(cmd, sizeof cmd, "mkdir %s/newdir; echo rc=$?", outside);
    r = run_sb(cmd);
    T_CHECK(r.out && strstr(r.out, "rc=1"), "new folder outside: refused");
    T_CHECK(!exists("%s/newdir", outside), "new folder outside: nothing appears");
    free(r.out);

    snprintf(cmd, sizeof cmd, "ln -s %s link && echo x > link/viasym; echo rc=$?", outside);
    r = run_sb(cmd);
    T_CHECK(r.out && strstr(r.out, "rc=1"), "write through a symlink planted inside: refused");
    T_CHECK(!exists("%s/viasym", outside), "write through a symlink: nothing appears");
    T_CHECK(exists("%s/link", ws), "the symlink itself was created inside the root");
    free(r.out);

    snprintf(cmd, sizeof cmd, "echo x > /proc/self/root%s/viaproc; echo rc=$?", outside);
    r = run_sb(cmd);
    T_CHECK(r.out && strstr(r.out, "rc=1"), "write through /proc/self/root: refused");
    T_CHECK(!exists("%s/viaproc", outside), "write through /proc/self/root: nothing appears");
    free(r.out);

    snprintf(cmd, sizeof cmd, "sh -c 'sh -c \"echo x > %s/grand; echo rc=\\$?\"'", outside);
    r = run_sb(cmd);
    /* dash: a failed redirection exits 2 */
    T_CHECK(r.out && strstr(r.out, "Permission denied") && strstr(r.out, "rc=2"),
            "write by a grandchild: refused (%s)", flat(r.out));
    T_CHECK(!exists("%s/grand", outside), "write by a grandchild: nothing appears");
    free(r.out);

    /* fork, setsid, fork: the daemon reports its result into the root and
     * the command waits for that file (no timing involved). */
    snprintf(cmd, sizeof cmd,
             "( setsid sh -c '( echo x 2>/dev/null > %s/daemon; echo $? > daemon.rc ) &' ); "
             "while [ ! -s daemon.rc ]; do sleep 0.01; done; cat daemon.rc",
             outside);
    r = run_sb(cmd);
    T_EQ_STR(r.out, "2\n", "write by a daemonized setsid child: refused");
    T_CHECK(!exists("%s/daemon", outside), "write by a daemon: nothing appears");
    free(r.out);

    r = run_sb("echo x > /etc/agt-sandbox-test; echo rc=$?");
    T_CHECK(r.out && strstr(r.out, "rc=1"), "write to /etc: refused");
    T_CHECK(!exists("%s", "/etc/agt-sandbox-test"), "write to /etc: nothing appears");
    free(r.out);
}

static void test_inside(void)
{
    run_result r = run_sb("echo hello > in.txt && mkdir -p sub/deeper && echo two > sub/deeper/f "
                          "&& mv sub/deeper/f sub/g && rm -r sub/deeper && cat in.txt sub/g && "
                          "echo t > \"$TMPDIR/t\" && cat \"$TMPDIR/t\" && echo > /dev/null && "
                          "echo done");
    T_EQ_STR(r.out, "hello\ntwo\nt\ndone\n", "writes inside the root and the tmp folder work");
    char path[PATH_MAX * 2];
    snprintf(path, sizeof path, "%s/sub/g", ws);
    char *g = slurp(path);
    T_EQ_STR(g, "two\n", "the file written inside is there for the host");
    free(g);
    free(r.out);
}

static void test_protected(void)
{
    char cmd[PATH_MAX * 3];
    snprintf(cmd, sizeof cmd, "cd %s && git init -q --template= . && rm -rf .git/hooks", ws);
    T_EQ_INT(system(cmd), 0, "setup: a repository without .git/hooks");
    T_CHECK(!exists("%s/.git/hooks", ws), "setup: .git/hooks does not exist");
    char cfgpath[PATH_MAX + 16];
    snprintf(cfgpath, sizeof cfgpath, "%s/.git/config", ws);
    char *cfg_before = slurp(cfgpath);

    run_result r = run_sb("mkdir -p .git/hooks; echo 'echo pwned' > .git/hooks/x; echo rc=$?");
    T_CHECK(r.out && strstr(r.out, "rc=1"),
            ".git/hooks/x refused although .git/hooks was missing "
            "(%s)",
            flat(r.out));
    T_CHECK(!exists("%s/.git/hooks/x", ws), ".git/hooks/x does not appear");
    free(r.out);

    r = run_sb("echo '[core] hooksPath=/tmp' >> .git/config; echo rc=$?; "
               "git config core.fsmonitor evil; echo rc2=$?");
    T_CHECK(r.out && strstr(r.out, "rc=1") && !strstr(r.out, "rc2=0"),
            ".git/config: appending and git config refused");
    char *cfg_after = slurp(cfgpath);
    T_EQ_STR(cfg_after, cfg_before, ".git/config unchanged");
    free(cfg_before);
    free(cfg_after);
    free(r.out);

    r = run_sb("mkdir .agenttools/x; echo rc=$?");
    T_CHECK(r.out && strstr(r.out, "rc=1"), "the session's .agenttools folder is read-only");
    free(r.out);

    r = run_sb("echo a > a.txt && git add a.txt && git -c user.name=T -c user.email=t@example.org "
               "commit -qm first && git log --format=%s");
    T_EQ_STR(r.out, "first\n", "git commit works in workspace-write");
    free(r.out);
}

/* Prepares (and frees at once, or gives back) a workspace-write sandbox
 * over dir protecting dir/.agenttools. */
static agti_sandbox *prepare_own(const char *dir)
{
    char own[PATH_MAX + 16];
    snprintf(own, sizeof own, "%s/.agenttools", dir);
    agti_sandbox_protect prot[] = {{own, true}};
    const char *roots[] = {dir};
    agti_sandbox_policy pol = {.mode = AGTI_SB_WORKSPACE_WRITE,
                               .require = true,
                               .writable = roots,
                               .nwritable = 1,
                               .tmp_dir = tmp,
                               .protect = prot,
                               .nprotect = 1};
    agti_sandbox *sb = NULL;
    if (agti_sandbox_prepare(&sb, &pol) != AGT_OK)
        t_diag("prepare: %s", agt_error_message());
    return sb;
}

/* Descriptors of this process that lead to path, removed or not. */
static int fds_on(const char *path)
{
    char want[PATH_MAX + 32], gone[PATH_MAX + 48];
    snprintf(want, sizeof want, "%s", path);
    snprintf(gone, sizeof gone, "%s (deleted)", path);
    int n = 0;
    for (int fd = 0; fd < 1024; fd++) {
        char link[64], to[PATH_MAX + 64];
        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        ssize_t len = readlink(link, to, sizeof to - 1);
        if (len < 0)
            continue;
        to[len] = '\0';
        if (strcmp(to, want) == 0 || strcmp(to, gone) == 0)
            n++;
    }
    return n;
}

/* fds_on(path) once the closing threads have done their work. */
static int fds_after_closer(const char *path)
{
    agti_sandbox_settle();
    return fds_on(path);
}

/* A removed placeholder: its name is gone when the last holder lets go
 * (synchronously), and the descriptor that held it, whose last close
 * evicts the inode (the slow part, left to a short-lived thread), is
 * closed too, so nothing of it stays in this process. */
static void test_placeholder_release(void)
{
    char dir[PATH_MAX], own[PATH_MAX + 16];
    snprintf(dir, sizeof dir, "%s/pr", base);
    mkdir(dir, 0755);
    snprintf(own, sizeof own, "%s/.agenttools", dir);
    T_EQ_INT(fds_on(own), 0, "release: no descriptor on the path before");
    agti_sandbox *sb = prepare_own(dir);
    T_CHECK(sb != NULL && exists("%s/.agenttools", dir), "release: placeholder made by prepare");
    T_EQ_INT(fds_on(own), 1, "release: the sandbox holds it by one descriptor (its lock)");
    agti_sandbox *ref = agti_sandbox_ref(sb);
    agti_sandbox_free(sb);
    T_CHECK(exists("%s/.agenttools", dir), "release: kept while a process reference remains");
    agti_sandbox_release(ref, true);
    T_CHECK(!exists("%s/.agenttools", dir), "release: the name is gone when the call returns");
    int left = fds_after_closer(own);
    T_EQ_INT(left, 0, "release: its descriptor is closed as well (no leak)");
    /* many in a row: every one removed, every descriptor closed */
    for (int i = 0; i < 20; i++)
        agti_sandbox_free(prepare_own(dir));
    T_CHECK(!exists("%s/.agenttools", dir), "release: 20 sandboxes in a row leave nothing");
    left = fds_after_closer(own);
    T_EQ_INT(left, 0, "release: and no descriptor of theirs stays open");
    rmdir(dir);
}

/* A placeholder another host process holds is not removed under it; a
 * marked one is removed by whichever process is the last to use it. */
static void test_placeholder_processes(void)
{
    char dir[PATH_MAX], own[PATH_MAX + 16];
    snprintf(dir, sizeof dir, "%s/pp", base);
    mkdir(dir, 0755);
    snprintf(own, sizeof own, "%s/.agenttools", dir);
    agti_sandbox *sb = prepare_own(dir);
    T_CHECK(sb != NULL && exists("%s/.agenttools", dir), "placeholder made by prepare");
    agti_sandbox *again = prepare_own(dir);
    agti_sandbox_free(again);
    T_CHECK(exists("%s/.agenttools", dir), "placeholder kept while another sandbox holds it");
    int go[2], ready[2];
    if (pipe(go) != 0 || pipe(ready) != 0)
        return;
    pid_t pid = fork();
    if (pid == 0) {
        /* another host process: a shared lock, as its own sandbox takes */
        int fd = open(own, O_RDONLY | O_DIRECTORY);
        char c = fd >= 0 && flock(fd, LOCK_SH) == 0 ? 'y' : 'n';
        if (write(ready[1], &c, 1) != 1 || read(go[0], &c, 1) != 1)
            _exit(1);
        _exit(0);
    }
    char c = 0;
    T_CHECK(read(ready[0], &c, 1) == 1 && c == 'y', "the other process holds the placeholder");
    agti_sandbox_free(sb);
    T_CHECK(exists("%s/.agenttools", dir),
            "placeholder not removed while another process holds it");
    if (write(go[1], "x", 1) != 1)
        t_diag("pipe write failed");
    int st;
    waitpid(pid, &st, 0);
    close(go[0]);
    close(go[1]);
    close(ready[0]);
    close(ready[1]);
    T_CHECK(exists("%s/.agenttools", dir), "left in place after that (fail closed)");
    char v[4];
    bool xattrs = getxattr(own, "user.agenttools.placeholder", v, sizeof v) == 1;
    if (!xattrs && (errno == ENOTSUP || errno == EOPNOTSUPP)) {
        t_skip("this filesystem keeps no user extended attributes: only the creator removes");
    } else {
        T_CHECK(xattrs && v[0] == '1', "the placeholder carries its mark");
        sb = prepare_own(dir);
        agti_sandbox_free(sb);
        T_CHECK(!exists("%s/.agenttools", dir), "the next last user removes a marked placeholder");
    }
    /* the user's own empty folder: never removed */
    rmdir(own);
    mkdir(own, 0755);
    sb = prepare_own(dir);
    agti_sandbox_free(sb);
    T_CHECK(exists("%s/.agenttools", dir), "the user's own empty .agenttools is kept");
    rmdir(own);
    rmdir(dir);
}

static void test_tools(void)
{
    char path[PATH_MAX * 2];
    snprintf(path, sizeof path, "%s/Makefile", ws);
    FILE *f = fopen(path, "w");
    fputs("all: built.txt\n\t@cat built.txt\nbuilt.txt:\n\t@echo made > built.txt\n", f);
    fclose(f);
    run_result r = run_sb("make -s");
    T_EQ_STR(r.out, "made\n", "make works in workspace-write");
    free(r.out);

    if (system("python3 -m pytest --version >/dev/null 2>&1") != 0) {
        t_skip("python3 -m pytest: pytest is not installed here");
    } else {
        snprintf(path, sizeof path, "%s/test_x.py", ws);
        f = fopen(path, "w");
        fputs("def test_one():\n    assert 1 + 1 == 2\n", f);
        fclose(f);
        r = run_sb("python3 -m pytest -q -p no:cacheprovider test_x.py >/dev/null; echo rc=$?");
        T_EQ_STR(r.out, "rc=0\n", "python3 -m pytest works in workspace-write");
        free(r.out);
    }

    if (system("npm --version >/dev/null 2>&1") != 0) {
        t_skip("npm --version: npm is not installed here");
    } else {
        run_result plain = run_in(AGTI_SB_OFF, false, "npm --version");
        r = run_sb("npm --version");
        T_CHECK(r.out && plain.out && strcmp(r.out, plain.out) == 0 && r.exit_code == 0,
                "npm --version works in workspace-write (%s)", flat(r.out));
        free(plain.out);
        free(r.out);
    }
}

static void test_network(void)
{
    int ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof a;
    bool ok = ls >= 0 && bind(ls, (struct sockaddr *)&a, sizeof a) == 0 && listen(ls, 16) == 0 &&
              getsockname(ls, (struct sockaddr *)&a, &al) == 0;
    T_CHECK(ok, "setup: a listener on 127.0.0.1");
    char cmd[256];
    snprintf(cmd, sizeof cmd, "exec 3<>/dev/tcp/127.0.0.1/%d && echo connected", ntohs(a.sin_port));
    run_result r = run_in(AGTI_SB_WORKSPACE_WRITE, false, cmd);
    T_CHECK(r.out && !strstr(r.out, "connected") && strstr(r.out, "Permission denied"),
            "TCP to 127.0.0.1 refused with the network off (%s)", flat(r.out));
    free(r.out);
    r = run_in(AGTI_SB_WORKSPACE_WRITE, true, cmd);
    T_EQ_STR(r.out, "connected\n", "TCP to 127.0.0.1 works with the network on");
    free(r.out);
    close(ls);

    r = run_sb("python3 -c 'import socket,os\n"
               "s=socket.socket(socket.AF_UNIX); s.bind(\"u.sock\"); s.listen(1)\n"
               "c=socket.socket(socket.AF_UNIX); c.connect(\"u.sock\")\n"
               "k,_=s.accept(); c.sendall(b\"ping\"); print(k.recv(4).decode())\n"
               "a,b=socket.socketpair(); a.sendall(b\"pair\"); print(b.recv(4).decode())'");
    T_EQ_STR(r.out, "ping\npair\n", "AF_UNIX sockets work with the network off");
    free(r.out);
}

static void test_read_only(void)
{
    run_result r = run_in(AGTI_SB_READ_ONLY, false,
                          "exec 2>/dev/null; echo x > ro.txt; echo rc1=$?; mkdir rodir; "
                          "echo rc2=$?; rm -f in.txt; echo rc3=$?; echo y >> in.txt; echo rc4=$?; "
                          "echo z > /dev/null; echo rc5=$?; echo t > \"$TMPDIR/ro\"; echo rc6=$?; "
                          "cat in.txt");
    T_EQ_STR(r.out, "rc1=1\nrc2=1\nrc3=1\nrc4=1\nrc5=0\nrc6=0\nhello\n",
             "read-only: every write refused but /dev/null and the private tmp; reads work");
    T_CHECK(!exists("%s/ro.txt", ws) && !exists("%s/rodir", ws), "read-only: nothing appears");
    free(r.out);
}

static void test_syscalls(void)
{
    char cmd[256];
    run_result r = run_sb("mkdir -p m && mount -t tmpfs none m 2>/dev/null; echo mount=$?; "
                          "unshare -U true 2>/dev/null; echo unshare=$?; "
                          "python3 -c 'import ctypes,sys; l=ctypes.CDLL(None, use_errno=True); "
                          "r=l.ptrace(0,0,0,0); print(\"ptrace\", r, ctypes.get_errno())'");
    T_EQ_STR(r.out, "mount=32\nunshare=1\nptrace -1 1\n",
             "seccomp: mount, a new user namespace and ptrace are refused (EPERM)");
    free(r.out);
#if defined(__x86_64__)
    /* An x32 system call (number with bit 30 set) carries the x86_64
     * architecture token, so only libseccomp's check of the number stops
     * it from bypassing the rules: the process is killed (SIGSYS, 128+31). */
    r = run_sb("exec 2>/dev/null; python3 -c 'import ctypes; "
               "ctypes.CDLL(None).syscall(0x40000000 | 39)'; echo rc=$?");
    T_EQ_STR(r.out, "rc=159\n", "seccomp: an x32 system call kills the process (SIGSYS)");
    free(r.out);
#endif
    if (agti_sandbox_probe_get()->landlock_abi >= 6 && agti_sandbox_probe_get()->subreaper) {
        /* Without a PID namespace the host's pid is visible: only the
         * Landlock scope stands between the command and the host. */
        g_supervise = AGTI_PROC_SUPERVISE_SUBREAPER;
        snprintf(cmd, sizeof cmd, "kill -0 %d; echo rc=$?", (int)getpid());
        run_result plain = run_in(AGTI_SB_OFF, false, cmd);
        T_EQ_STR(plain.out, "rc=0\n", "unsandboxed: the host process can be signalled");
        r = run_sb(cmd);
        T_CHECK(r.out && strstr(r.out, "Operation not permitted") && strstr(r.out, "rc=1"),
                "Landlock scope: the host process cannot be signalled (%s)", flat(r.out));
        g_supervise = AGTI_PROC_SUPERVISE_AUTO;
        free(plain.out);
        free(r.out);
    } else {
        t_skip("signal scoping needs Landlock ABI 6");
    }
}

static void test_identical(void)
{
    const char *cmd = "echo hi; printf '%s|' a 'b c'; echo; pwd; id -u; id -g; "
                      "ls /usr/bin | head -3; cat /etc/hostname 2>&1 | wc -c; git --version; "
                      "sort -r <<< $'a\\nb\\nc'; sh -c 'exit 3'; echo status=$?";
    run_result a = run_in(AGTI_SB_OFF, false, cmd);
    run_result b = run_sb(cmd);
    T_CHECK(a.out && b.out && strcmp(a.out, b.out) == 0, "ordinary commands: identical output");
    if (a.out && b.out && strcmp(a.out, b.out) != 0)
        t_diag("unsandboxed:\n%s\nsandboxed:\n%s", a.out, b.out);
    T_EQ_INT(b.exit_code, a.exit_code, "ordinary commands: identical exit code");
    free(a.out);
    free(b.out);
}

static void test_policy_errors(void)
{
    agti_sandbox *sb = NULL;
    const char *rel[] = {"relative/path"};
    agti_sandbox_policy pol = {.mode = AGTI_SB_WORKSPACE_WRITE, .writable = rel, .nwritable = 1};
    T_EQ_INT(agti_sandbox_prepare(&sb, &pol), AGT_EINVAL, "a relative writable root is refused");
    T_CHECK(strstr(agt_error_message(), "writable root 0") != NULL, "the message names it");
    pol.nwritable = 0;
    pol.mode = 7;
    T_EQ_INT(agti_sandbox_prepare(&sb, &pol), AGT_EINVAL, "an unknown mode is refused");
    T_CHECK(sb == NULL, "nothing is returned on error");
}

int main(void)
{
    const char *t = getenv("TMPDIR");
    snprintf(base, sizeof base, "%s/agt-sandbox-XXXXXX", t && t[0] == '/' ? t : "/tmp");
    if (mkdtemp(base) == NULL)
        return 1;
    snprintf(ws, sizeof ws, "%s/ws", base);
    snprintf(outside, sizeof outside, "%s/out", base);
    snprintf(tmp, sizeof tmp, "%s/tmp", base);
    mkdir(ws, 0755);
    mkdir(outside, 0755);
    mkdir(tmp, 0700);

    test_probe();
    const agti_sandbox_probe *p = agti_sandbox_probe_get();
    if (p->landlock_abi == 0 || !p->seccomp || !(p->mount_ns)) {
        t_skip("this kernel lacks Landlock, seccomp or mount namespaces: nothing to enforce");
    } else {
        test_outside();
        test_inside();
        test_protected();
        test_placeholder_processes();
        test_placeholder_release();
        test_tools();
        test_network();
        test_read_only();
        test_syscalls();
        test_identical();
    }
    test_policy_errors();

    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf %s", base);
    if (system(cmd) != 0)
        t_diag("cleanup of %s failed", base);
    return t_done();
}
