/*
 * Sandbox engine (see sandbox.h): probing, preparation in the parent, and the
 * async-signal-safe steps the child takes before exec.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "sandbox.h"
#include "sandbox_internal.h"

#ifdef __linux__
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#endif

const char *agti_sandbox_step_name(int step)
{
    switch (step) {
    case AGTI_SB_STEP_IDMAP:
        return "writing the user namespace id maps";
    case AGTI_SB_STEP_MOUNT:
        return "mounting the protected paths read-only";
    case AGTI_SB_STEP_NNP:
        return "setting no_new_privs";
    case AGTI_SB_STEP_LANDLOCK:
        return "applying the Landlock ruleset";
    case AGTI_SB_STEP_SECCOMP:
        return "loading the seccomp filter";
    case AGTI_SB_STEP_CHDIR:
        return "changing to the working directory";
    case AGTI_SB_STEP_EXEC:
        return "starting the shell";
    case AGTI_SB_STEP_FORK:
        return "starting the command under its supervisor";
    case AGTI_SB_STEP_SETUP:
        return "setting up descriptors and signals";
    default:
        return "starting the command";
    }
}

char *agti_sandbox_probe_json(void)
{
    const agti_sandbox_probe *p = agti_sandbox_probe_get();
    return agti_aprintf(
        "{\"supported\":%s,\"landlock_abi\":%d,\"seccomp\":%s,"
        "\"user_namespace\":%s,\"mount_namespace\":%s,\"pid_namespace\":%s,"
        "\"network_namespace\":%s,\"subreaper\":%s,\"root\":%s}",
        p->supported ? "true" : "false", p->landlock_abi, p->seccomp ? "true" : "false",
        p->user_ns ? "true" : "false", p->mount_ns ? "true" : "false", p->pid_ns ? "true" : "false",
        p->net_ns ? "true" : "false", p->subreaper ? "true" : "false", p->root ? "true" : "false");
}

#ifndef __linux__

/* ---- other systems: nothing is enforced, and nothing pretends to be ---- */

static agti_sandbox_probe g_probe;

const agti_sandbox_probe *agti_sandbox_probe_get(void)
{
    g_probe.root = getuid() == 0;
    return &g_probe;
}

const agti_sandbox_probe *agti_sandbox_probe_basic(void)
{
    return agti_sandbox_probe_get();
}

bool agti_sandbox_probe_ran(void)
{
    return true;
}

struct agti_sandbox {
    int mode;
    unsigned refs;
};

int agti_sandbox_prepare(agti_sandbox **out, const agti_sandbox_policy *pol)
{
    *out = NULL;
    if (pol == NULL)
        return agti_error(AGT_EINVAL, "sandbox: the policy is NULL");
    if (pol->mode != AGTI_SB_OFF)
        return agti_error(AGT_EUNSUPPORTED,
                          "sandbox: this system has no sandbox support (Linux only)");
    agti_sandbox *sb = calloc(1, sizeof *sb);
    if (sb == NULL)
        return agti_oom();
    sb->refs = 1;
    *out = sb;
    return AGT_OK;
}

agti_sandbox *agti_sandbox_ref(const agti_sandbox *csb)
{
    agti_sandbox *sb = (agti_sandbox *)csb;
    if (sb != NULL)
        __atomic_add_fetch(&sb->refs, 1, __ATOMIC_ACQ_REL);
    return sb;
}

void agti_sandbox_release(agti_sandbox *sb, bool all_gone)
{
    (void)all_gone;
    if (sb != NULL && __atomic_sub_fetch(&sb->refs, 1, __ATOMIC_ACQ_REL) == 0)
        free(sb);
}

void agti_sandbox_settle(void) {}

void agti_sandbox_free(agti_sandbox *sb)
{
    agti_sandbox_release(sb, true);
}

void agti_sandbox_get_enforced(const agti_sandbox *sb, agti_sandbox_enforced *e)
{
    (void)sb;
    memset(e, 0, sizeof *e);
    e->network = true;
}

const char *const *agti_sandbox_unprotected(const agti_sandbox *sb, size_t *n)
{
    (void)sb;
    *n = 0;
    return NULL;
}

unsigned long agti_sandbox_clone_flags(const agti_sandbox *sb)
{
    (void)sb;
    return 0;
}

int agti_sandbox_child_namespaces(const agti_sandbox *sb, agti_sandbox_err *e)
{
    (void)sb;
    (void)e;
    return 0;
}

int agti_sandbox_child_pidns_proc(const agti_sandbox *sb, agti_sandbox_err *e)
{
    (void)sb;
    (void)e;
    return 0;
}

int agti_sandbox_child_restrict(const agti_sandbox *sb, agti_sandbox_err *e)
{
    (void)sb;
    (void)e;
    return 0;
}

#else /* __linux__ */

/* ---- Landlock (the constants of the newest ABI; old headers lack them) ---- */

#define LL_CREATE_RULESET_VERSION (1U << 0)
#define LL_RULE_PATH_BENEATH 1

#define LL_FS_EXECUTE (1ULL << 0)
#define LL_FS_WRITE_FILE (1ULL << 1)
#define LL_FS_READ_FILE (1ULL << 2)
#define LL_FS_READ_DIR (1ULL << 3)
#define LL_FS_REMOVE_DIR (1ULL << 4)
#define LL_FS_REMOVE_FILE (1ULL << 5)
#define LL_FS_MAKE_CHAR (1ULL << 6)
#define LL_FS_MAKE_DIR (1ULL << 7)
#define LL_FS_MAKE_REG (1ULL << 8)
#define LL_FS_MAKE_SOCK (1ULL << 9)
#define LL_FS_MAKE_FIFO (1ULL << 10)
#define LL_FS_MAKE_BLOCK (1ULL << 11)
#define LL_FS_MAKE_SYM (1ULL << 12)
#define LL_FS_REFER (1ULL << 13)                  /* ABI 2 */
#define LL_FS_TRUNCATE (1ULL << 14)               /* ABI 3 */
#define LL_FS_IOCTL_DEV (1ULL << 15)              /* ABI 5 */
#define LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0) /* ABI 6 */
#define LL_SCOPE_SIGNAL (1ULL << 1)               /* ABI 6 */

struct ll_ruleset_attr {
    uint64_t handled_access_fs;
    uint64_t handled_access_net; /* ABI 4 */
    uint64_t scoped;             /* ABI 6 */
};

struct ll_path_beneath_attr {
    uint64_t allowed_access;
    int32_t parent_fd;
} __attribute__((packed));

#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#define __NR_landlock_add_rule 445
#define __NR_landlock_restrict_self 446
#endif

/* Rights that apply to files (a rule on a file may only name these). */
#define LL_FILE_RIGHTS                                                                             \
    (LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_READ_FILE | LL_FS_TRUNCATE | LL_FS_IOCTL_DEV)
#define LL_READ_RIGHTS (LL_FS_EXECUTE | LL_FS_READ_FILE | LL_FS_READ_DIR)

static uint64_t ll_handled(int abi)
{
    uint64_t h = (LL_FS_MAKE_SYM << 1) - 1; /* ABI 1: bits 0..12 */
    if (abi >= 2)
        h |= LL_FS_REFER;
    if (abi >= 3)
        h |= LL_FS_TRUNCATE;
    if (abi >= 5)
        h |= LL_FS_IOCTL_DEV;
    return h;
}

/* ---- probing ------------------------------------------------------------ */

static agti_sandbox_probe g_basic, g_probe;
static pthread_once_t g_basic_once = PTHREAD_ONCE_INIT, g_probe_once = PTHREAD_ONCE_INIT;
static bool g_probe_ran; /* written once, inside g_probe_once */

/* Formats "inside outside 1\n" without stdio (also used in the child's
 * preparation, so kept trivial). */
static void fmt_map(char *buf, size_t cap, unsigned id)
{
    snprintf(buf, cap, "%u %u 1\n", id, id);
}

/* write(2) of a whole small buffer to a /proc file; async-signal-safe. */
static int write_file(const char *path, const char *s)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t n = strlen(s);
    ssize_t w = write(fd, s, n);
    int e = errno;
    close(fd);
    if (w != (ssize_t)n) {
        errno = w < 0 ? e : EIO;
        return -1;
    }
    return 0;
}

int agti_sb_write_idmaps(const char *uid_map, const char *gid_map)
{
    /* setgroups must be denied before an unprivileged gid_map write; as
     * root it is allowed either way, and denying it costs nothing. */
    if (write_file("/proc/self/setgroups", "deny") != 0 && errno != ENOENT)
        return -1;
    if (write_file("/proc/self/uid_map", uid_map) != 0)
        return -1;
    if (write_file("/proc/self/gid_map", gid_map) != 0)
        return -1;
    return 0;
}

long agti_sb_raw_clone(unsigned long flags)
{
    /* No new stack: the child continues on a copy of ours, as after fork. */
    return syscall(SYS_clone, flags | SIGCHLD, 0, 0, 0, 0);
}

/* Starts a child in new namespaces that checks what it needs and exits
 * 0 on success. */
static bool try_namespaces(unsigned long flags, bool userns, int what)
{
    char um[32], gm[32];
    fmt_map(um, sizeof um, (unsigned)getuid());
    fmt_map(gm, sizeof gm, (unsigned)getgid());
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    long pid = agti_sb_raw_clone(flags);
    if (pid == 0) {
        if (userns && agti_sb_write_idmaps(um, gm) != 0)
            _exit(1);
        if (what == 1 && mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) != 0)
            _exit(2);
        if (what == 2 &&
            (getpid() != 1 || mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) != 0 ||
             mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0))
            _exit(3);
        if (what == 3 && prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0)
            _exit(4);
        _exit(0);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (pid < 0)
        return false;
    int st;
    while (waitpid((pid_t)pid, &st, 0) < 0)
        if (errno != EINTR)
            return false;
    return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

/* What one system call each tells (no child process). */
static void probe_basic_once(void)
{
    agti_sandbox_probe *p = &g_basic;
    p->supported = true;
    p->root = geteuid() == 0;
    long abi = syscall(__NR_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);
    p->landlock_abi = abi > 0 ? (int)abi : 0;
    p->seccomp = agti_sb_seccomp_available();
}

/* The namespaces and the subreaper: five short-lived children (about 2 ms
 * on this machine), so only when a command is about to run or someone
 * asks for the whole probe. */
static void probe_once(void)
{
    pthread_once(&g_basic_once, probe_basic_once);
    agti_sandbox_probe *p = &g_probe;
    *p = g_basic;
    p->user_ns = try_namespaces(CLONE_NEWUSER, true, 0);
    unsigned long u = p->user_ns ? CLONE_NEWUSER : 0;
    bool can = p->user_ns || p->root;
    p->mount_ns = can && try_namespaces(u | CLONE_NEWNS, p->user_ns, 1);
    /* A PID namespace is only usable with its own /proc (else $$ and
     * /proc/$$ would name different processes). */
    p->pid_ns = can && try_namespaces(u | CLONE_NEWPID | CLONE_NEWNS, p->user_ns, 2);
    p->net_ns = can && try_namespaces(u | CLONE_NEWNET, p->user_ns, 0);
    p->subreaper = try_namespaces(0, false, 3);
    __atomic_store_n(&g_probe_ran, true, __ATOMIC_RELEASE);
}

const agti_sandbox_probe *agti_sandbox_probe_get(void)
{
    pthread_once(&g_probe_once, probe_once);
    return &g_probe;
}

const agti_sandbox_probe *agti_sandbox_probe_basic(void)
{
    pthread_once(&g_basic_once, probe_basic_once);
    return &g_basic;
}

bool agti_sandbox_probe_ran(void)
{
    return __atomic_load_n(&g_probe_ran, __ATOMIC_ACQUIRE);
}

/* ---- preparation ---------------------------------------------------------- */

typedef struct sb_mount {
    char *target;
    unsigned long flags; /* remount flags: MS_RDONLY + the locked ones kept */
} sb_mount;

struct agti_sandbox {
    int mode;
    bool network;
    int landlock_fd; /* -1: none */
    int landlock_abi;
    agti_sb_bpf bpf; /* len 0: none */
    bool user_ns, mount_ns;
    char uid_map[32], gid_map[32];
    sb_mount *mounts;
    size_t nmounts;
    char **unprotected;
    size_t nunprotected;
    agti_sb_resv **held; /* placeholders this sandbox mounts over */
    size_t nheld;
    bool outlived; /* a holder's processes may outlive it (keep placeholders) */
    unsigned refs; /* 1 + the processes that run in it (agti_sandbox_ref) */
};

agti_sandbox *agti_sandbox_ref(const agti_sandbox *csb)
{
    agti_sandbox *sb = (agti_sandbox *)csb;
    if (sb != NULL)
        __atomic_add_fetch(&sb->refs, 1, __ATOMIC_ACQ_REL);
    return sb;
}

void agti_sandbox_settle(void)
{
    agti_sb_resv_settle();
}

void agti_sandbox_free(agti_sandbox *sb)
{
    agti_sandbox_release(sb, true);
}

void agti_sandbox_release(agti_sandbox *sb, bool all_gone)
{
    if (sb == NULL)
        return;
    if (!all_gone)
        __atomic_store_n(&sb->outlived, true, __ATOMIC_RELEASE);
    if (__atomic_sub_fetch(&sb->refs, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    bool gone = !__atomic_load_n(&sb->outlived, __ATOMIC_ACQUIRE);
    agti_sb_resv_release(sb->held, sb->nheld, gone);
    free(sb->held);
    if (sb->landlock_fd >= 0)
        close(sb->landlock_fd);
    free(sb->bpf.filter);
    for (size_t i = 0; i < sb->nmounts; i++)
        free(sb->mounts[i].target);
    free(sb->mounts);
    for (size_t i = 0; i < sb->nunprotected; i++)
        free(sb->unprotected[i]);
    free(sb->unprotected);
    free(sb);
}

static int ll_add(int ruleset, const char *path, uint64_t access, uint64_t handled)
{
    int fd = open(path, O_PATH | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT)
            return AGT_OK; /* a device this system lacks: nothing to allow */
        return agti_error(AGT_EIO, "sandbox: cannot open '%s' for its Landlock rule: %s", path,
                          strerror(errno));
    }
    struct stat st;
    if (fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode))
        access &= LL_FILE_RIGHTS;
    struct ll_path_beneath_attr pb = {.allowed_access = access & handled, .parent_fd = fd};
    long r = syscall(__NR_landlock_add_rule, ruleset, LL_RULE_PATH_BENEATH, &pb, 0);
    int e = errno;
    close(fd);
    if (r != 0)
        return agti_error(AGT_EIO, "sandbox: Landlock rule for '%s': %s", path, strerror(e));
    return AGT_OK;
}

static int build_landlock(agti_sandbox *sb, const agti_sandbox_policy *pol, int abi)
{
    uint64_t handled = ll_handled(abi);
    struct ll_ruleset_attr attr = {.handled_access_fs = handled};
    size_t size = sizeof attr.handled_access_fs;
    if (abi >= 6) {
        /* Signals and abstract unix sockets stay inside the sandbox: a
         * confined command cannot kill or talk to the host's processes. */
        attr.scoped = LL_SCOPE_ABSTRACT_UNIX_SOCKET | LL_SCOPE_SIGNAL;
        size = sizeof attr;
    }
    long fd = syscall(__NR_landlock_create_ruleset, &attr, size, 0);
    if (fd < 0)
        return agti_error(AGT_EIO, "sandbox: landlock_create_ruleset: %s", strerror(errno));
    sb->landlock_fd = (int)fd;
    int rc = ll_add(sb->landlock_fd, "/", LL_READ_RIGHTS, handled);
    /* Devices a command writes to without creating anything. */
    static const char *const devs[] = {"/dev/null", "/dev/zero", "/dev/full",
                                       "/dev/tty",  "/dev/ptmx", "/dev/pts"};
    for (size_t i = 0; rc == AGT_OK && i < sizeof devs / sizeof devs[0]; i++)
        rc = ll_add(sb->landlock_fd, devs[i],
                    LL_FS_READ_FILE | LL_FS_WRITE_FILE | LL_FS_TRUNCATE | LL_FS_IOCTL_DEV |
                        LL_FS_READ_DIR,
                    handled);
    if (rc == AGT_OK)
        rc = ll_add(sb->landlock_fd, "/dev", LL_READ_RIGHTS | LL_FS_IOCTL_DEV, handled);
    if (rc == AGT_OK && pol->tmp_dir)
        rc = ll_add(sb->landlock_fd, pol->tmp_dir, handled, handled);
    for (size_t i = 0; rc == AGT_OK && pol->mode == AGTI_SB_WORKSPACE_WRITE && i < pol->nwritable;
         i++)
        rc = ll_add(sb->landlock_fd, pol->writable[i], handled, handled);
    return rc;
}

static bool under_root(const char *path, const agti_sandbox_policy *pol)
{
    for (size_t i = 0; i < pol->nwritable; i++) {
        size_t n = strlen(pol->writable[i]);
        if (strncmp(path, pol->writable[i], n) == 0 &&
            (path[n] == '/' || path[n] == '\0' || n == 1))
            return true;
    }
    return false;
}

/* The mount flags a read-only remount of a bind of path must keep: inside a
 * user namespace the kernel refuses to clear the locked ones (nosuid, nodev,
 * noexec, the atime mode) of the mount underneath. */
static unsigned long kept_flags(const char *path)
{
    struct statvfs v;
    unsigned long f = MS_RDONLY | MS_REMOUNT | MS_BIND;
    if (statvfs(path, &v) != 0)
        return f;
    if (v.f_flag & ST_NOSUID)
        f |= MS_NOSUID;
    if (v.f_flag & ST_NODEV)
        f |= MS_NODEV;
    if (v.f_flag & ST_NOEXEC)
        f |= MS_NOEXEC;
    if (v.f_flag & ST_NOATIME)
        f |= MS_NOATIME;
    if (v.f_flag & ST_NODIRATIME)
        f |= MS_NODIRATIME;
    if (v.f_flag & ST_RELATIME)
        f |= MS_RELATIME;
    return f;
}

static int add_unprotected(agti_sandbox *sb, const char *path)
{
    char **g = realloc(sb->unprotected, (sb->nunprotected + 1) * sizeof *g);
    if (g == NULL)
        return agti_oom();
    sb->unprotected = g;
    if ((g[sb->nunprotected] = agti_strdup(path)) == NULL)
        return agti_oom();
    sb->nunprotected++;
    return AGT_OK;
}

static int hold(agti_sandbox *sb, agti_sb_resv *r)
{
    agti_sb_resv **g = realloc(sb->held, (sb->nheld + 1) * sizeof *g);
    if (g == NULL) {
        agti_sb_resv_release(&r, 1, true);
        return agti_oom();
    }
    sb->held = g;
    g[sb->nheld++] = r;
    return AGT_OK;
}

/* A protected path: the mount covers it when it exists. When it does not,
 * its nearest missing ancestor below an existing folder (inside the
 * writable root it belongs to) is reserved instead and covered: for
 * .git/hooks of a workspace without .git, .git itself, so the command can
 * create no .git at all (fail closed: no hooks, no config of a repository
 * it could make). A placeholder is held until the commands using it have
 * ended, then removed (reserve.c). */
static int plan_protect(agti_sandbox *sb, const agti_sandbox_protect *pr)
{
    for (size_t i = 0; i < sb->nmounts; i++) {
        size_t n = strlen(sb->mounts[i].target);
        if (strncmp(pr->path, sb->mounts[i].target, n) == 0 &&
            (pr->path[n] == '/' || pr->path[n] == '\0'))
            return AGT_OK; /* below a path already covered (.git/config below .git) */
    }
    char *target = agti_strdup(pr->path);
    if (target == NULL)
        return agti_oom();
    bool is_dir = pr->is_dir;
    int rc = AGT_OK;
    for (;;) {
        struct stat st;
        if (lstat(target, &st) == 0)
            break;
        if (errno != ENOENT) {
            rc = agti_error(AGT_EIO, "sandbox: protected path '%s': %s", target, strerror(errno));
            break;
        }
        char *slash = strrchr(target, '/');
        if (slash == NULL || slash == target)
            break; /* the root folder's own entry: reserve it */
        *slash = '\0';
        struct stat pst;
        int pr_rc = lstat(target, &pst);
        int perr = errno;
        if (pr_rc == 0 && S_ISDIR(pst.st_mode)) {
            *slash = '/'; /* its folder exists: reserve it there */
            break;
        }
        if (pr_rc == 0 || perr != ENOENT) {
            /* the folder is a file or a link (a .git file of a worktree is
             * protected as itself): nothing here to cover */
            *slash = '/';
            rc = add_unprotected(sb, target);
            free(target);
            return rc;
        }
        is_dir = true; /* the missing folder becomes the placeholder */
    }
    agti_sb_resv *r = NULL;
    if (rc == AGT_OK) {
        int h = agti_sb_resv_acquire(target, is_dir, &r);
        if (h < 0)
            rc = agti_error(AGT_EIO, "sandbox: cannot reserve protected path '%s': %s", target,
                            strerror(errno));
        else if (r != NULL)
            rc = hold(sb, r);
    }
    sb_mount *g = rc == AGT_OK ? realloc(sb->mounts, (sb->nmounts + 1) * sizeof *g) : NULL;
    if (rc == AGT_OK && g == NULL)
        rc = agti_oom();
    if (rc != AGT_OK) {
        free(target);
        return rc;
    }
    sb->mounts = g;
    g[sb->nmounts].target = target;
    g[sb->nmounts].flags = kept_flags(target);
    sb->nmounts++;
    return AGT_OK;
}

static int check_policy(const agti_sandbox_policy *pol)
{
    if (pol->mode < AGTI_SB_OFF || pol->mode > AGTI_SB_WORKSPACE_WRITE)
        return agti_error(AGT_EINVAL, "sandbox: unknown filesystem policy %d", pol->mode);
    for (size_t i = 0; i < pol->nwritable; i++)
        if (pol->writable[i] == NULL || pol->writable[i][0] != '/')
            return agti_error(AGT_EINVAL, "sandbox: writable root %zu is not an absolute path", i);
    if (pol->tmp_dir && pol->tmp_dir[0] != '/')
        return agti_error(AGT_EINVAL, "sandbox: the tmp folder is not an absolute path");
    for (size_t i = 0; i < pol->nprotect; i++)
        if (pol->protect[i].path == NULL || pol->protect[i].path[0] != '/')
            return agti_error(AGT_EINVAL, "sandbox: protected path %zu is not an absolute path", i);
    return AGT_OK;
}

int agti_sandbox_prepare(agti_sandbox **out, const agti_sandbox_policy *pol)
{
    *out = NULL;
    if (pol == NULL)
        return agti_error(AGT_EINVAL, "sandbox: the policy is NULL");
    int rc = check_policy(pol);
    if (rc != AGT_OK)
        return rc;
    agti_sandbox *sb = calloc(1, sizeof *sb);
    if (sb == NULL)
        return agti_oom();
    sb->landlock_fd = -1;
    sb->refs = 1;
    sb->mode = pol->mode;
    sb->network = pol->mode == AGTI_SB_OFF || pol->network;
    if (pol->mode == AGTI_SB_OFF) {
        *out = sb;
        return AGT_OK;
    }
    const agti_sandbox_probe *pr = agti_sandbox_probe_get();
    /* Landlock: the filesystem policy itself. */
    if (pr->landlock_abi > 0) {
        rc = build_landlock(sb, pol, pr->landlock_abi);
        sb->landlock_abi = pr->landlock_abi;
    } else if (pol->require) {
        rc = agti_error(AGT_EUNSUPPORTED,
                        "sandbox: the kernel has no Landlock, so file writes cannot be "
                        "confined (the policy requires it)");
    }
    /* seccomp: network and the dangerous system calls. */
    if (rc == AGT_OK) {
        if (pr->seccomp)
            rc = agti_sb_seccomp_build(!sb->network, &sb->bpf);
        else if (pol->require)
            rc = agti_error(AGT_EUNSUPPORTED,
                            "sandbox: seccomp filters are unavailable (kernel or build without "
                            "libseccomp), so the network and dangerous system calls cannot be "
                            "blocked (the policy requires it)");
    }
    /* Namespaces for the read-only mounts over protected paths. */
    bool want_mounts = pol->mode == AGTI_SB_WORKSPACE_WRITE && pol->nprotect > 0;
    if (rc == AGT_OK && want_mounts) {
        if (pr->user_ns && pr->mount_ns) {
            sb->user_ns = sb->mount_ns = true;
        } else if (pr->root && pr->mount_ns) {
            sb->mount_ns = true;
        } else if (pol->require) {
            rc = agti_error(AGT_EUNSUPPORTED,
                            "sandbox: no mount namespace can be created, so protected paths "
                            "(.git/hooks, .git/config) cannot be kept read-only (the policy "
                            "requires it)");
        }
    } else if (rc == AGT_OK && pr->user_ns) {
        /* No mounts needed, but a user namespace still drops the host's
         * capabilities (a root host's commands lose them). */
        sb->user_ns = true;
    }
    for (size_t i = 0; rc == AGT_OK && want_mounts && i < pol->nprotect; i++) {
        if (!under_root(pol->protect[i].path, pol))
            continue; /* outside every writable root: Landlock keeps it read-only */
        if (sb->mount_ns)
            rc = plan_protect(sb, &pol->protect[i]);
        else
            rc = add_unprotected(sb, pol->protect[i].path);
    }
    if (sb->user_ns) {
        fmt_map(sb->uid_map, sizeof sb->uid_map, (unsigned)geteuid());
        fmt_map(sb->gid_map, sizeof sb->gid_map, (unsigned)getegid());
    }
    if (rc != AGT_OK) {
        agti_sandbox_free(sb);
        return rc;
    }
    *out = sb;
    return AGT_OK;
}

void agti_sandbox_get_enforced(const agti_sandbox *sb, agti_sandbox_enforced *e)
{
    memset(e, 0, sizeof *e);
    if (sb == NULL) {
        e->network = true;
        return;
    }
    e->mode = sb->mode;
    e->network = sb->network;
    e->landlock_abi = sb->landlock_fd >= 0 ? sb->landlock_abi : 0;
    e->seccomp = sb->bpf.len > 0;
    e->user_ns = sb->user_ns;
    e->mount_ns = sb->mount_ns;
    e->protected_paths = sb->nmounts;
    e->unprotected_paths = sb->nunprotected;
}

const char *const *agti_sandbox_unprotected(const agti_sandbox *sb, size_t *n)
{
    *n = sb ? sb->nunprotected : 0;
    return *n ? (const char *const *)sb->unprotected : NULL;
}

unsigned long agti_sandbox_clone_flags(const agti_sandbox *sb)
{
    if (sb == NULL)
        return 0;
    return (sb->user_ns ? CLONE_NEWUSER : 0) | (sb->mount_ns ? CLONE_NEWNS : 0);
}

/* ---- in the child (async-signal-safe from here on) ------------------------ */

static int fail(agti_sandbox_err *e, int step)
{
    e->step = step;
    e->err = errno;
    return -1;
}

int agti_sandbox_child_namespaces(const agti_sandbox *sb, agti_sandbox_err *e)
{
    if (sb == NULL)
        return 0;
    if (sb->user_ns && agti_sb_write_idmaps(sb->uid_map, sb->gid_map) != 0)
        return fail(e, AGTI_SB_STEP_IDMAP);
    if (!sb->mount_ns)
        return 0;
    /* Our mounts must not propagate back to the host. */
    if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) != 0)
        return fail(e, AGTI_SB_STEP_MOUNT);
    for (size_t i = 0; i < sb->nmounts; i++) {
        const sb_mount *m = &sb->mounts[i];
        if (mount(m->target, m->target, NULL, MS_BIND, NULL) != 0 ||
            mount(NULL, m->target, NULL, m->flags, NULL) != 0)
            return fail(e, AGTI_SB_STEP_MOUNT);
    }
    return 0;
}

int agti_sandbox_child_pidns_proc(const agti_sandbox *sb, agti_sandbox_err *e)
{
    if ((sb == NULL || !sb->mount_ns) && mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) != 0)
        return fail(e, AGTI_SB_STEP_MOUNT);
    if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0)
        return fail(e, AGTI_SB_STEP_MOUNT);
    return 0;
}

int agti_sandbox_child_restrict(const agti_sandbox *sb, agti_sandbox_err *e)
{
    if (sb == NULL || sb->mode == AGTI_SB_OFF)
        return 0;
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return fail(e, AGTI_SB_STEP_NNP);
    if (sb->landlock_fd >= 0 && syscall(__NR_landlock_restrict_self, sb->landlock_fd, 0) != 0)
        return fail(e, AGTI_SB_STEP_LANDLOCK);
    if (sb->bpf.len > 0 && agti_sb_seccomp_load(&sb->bpf) != 0)
        return fail(e, AGTI_SB_STEP_SECCOMP);
    return 0;
}

#endif /* __linux__ */
