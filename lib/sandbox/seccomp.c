/*
 * The seccomp filter of the sandbox, compiled with libseccomp in the parent
 * and exported as a classic BPF program (seccomp_export_bpf into a memfd,
 * read back), so that the child only has to hand it to prctl().
 *
 * Refused with EPERM: ptrace, process_vm_readv/writev, kexec_*, bpf,
 * perf_event_open, io_uring_*, userfaultfd, the mount family (mount, umount2,
 * pivot_root, the new mount API), setns, module loading, the kernel keyring,
 * unshare and clone asking for a new user namespace, and the terminal
 * ioctls that put characters into a terminal's input queue (TIOCSTI,
 * TIOCLINUX: typed into the user's shell after the agent exits, they would
 * run outside the sandbox); clone3 gets ENOSYS (its flags live in memory a
 * filter cannot read, and C libraries then fall back to clone). With the
 * network off, socket() for any family but AF_UNIX fails with EACCES.
 * System calls of another architecture (32-bit entry on x86_64) kill the
 * process: libseccomp's default for a foreign architecture (x32 calls on
 * x86_64 too).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/core.h"
#include "sandbox_internal.h"

#if defined(__linux__) && defined(__has_include)
#if __has_include(<seccomp.h>)
#define AGT_HAVE_SECCOMP 1
#endif
#endif
#ifdef AGT_HAVE_SECCOMP
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>

bool agti_sb_seccomp_available(void)
{
    return prctl(PR_GET_SECCOMP, 0, 0, 0, 0) >= 0;
}

static const char *const denied[] = {
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "kexec_load",
    "kexec_file_load",
    "bpf",
    "perf_event_open",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "userfaultfd",
    "mount",
    "umount",
    "umount2",
    "pivot_root",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "open_tree",
    "move_mount",
    "mount_setattr",
    "setns",
    "init_module",
    "finit_module",
    "delete_module",
    "add_key",
    "request_key",
    "keyctl",
};

int agti_sb_seccomp_build(bool no_network, agti_sb_bpf *out)
{
    memset(out, 0, sizeof *out);
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    if (ctx == NULL)
        return agti_oom();
    int r = 0;
    /* The child sets no_new_privs itself; the exported program must not
     * depend on libseccomp doing it. */
    r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
    for (size_t i = 0; r == 0 && i < sizeof denied / sizeof denied[0]; i++) {
        int nr = seccomp_syscall_resolve_name(denied[i]);
        if (nr == __NR_SCMP_ERROR)
            continue; /* not a system call on this architecture */
        r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0);
    }
    if (r == 0)
        r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(unshare), 1,
                             SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER));
    if (r == 0)
        r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
                             SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER));
    /* The kernel reads an ioctl's request as a 32-bit unsigned int, but the
     * filter sees the whole 64-bit register: compare only the low 32 bits,
     * or TIOCSTI | 1 << 32 would pass the filter and still be TIOCSTI. */
    static const unsigned long tty_inject[] = {TIOCSTI, TIOCLINUX};
    for (size_t i = 0; r == 0 && i < sizeof tty_inject / sizeof tty_inject[0]; i++)
        r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1,
                             SCMP_A1(SCMP_CMP_MASKED_EQ, 0xFFFFFFFFu, tty_inject[i]));
    if (r == 0) {
        int nr = seccomp_syscall_resolve_name("clone3");
        if (nr != __NR_SCMP_ERROR)
            r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), nr, 0);
    }
    if (r == 0 && no_network)
        r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EACCES), SCMP_SYS(socket), 1,
                             SCMP_A0(SCMP_CMP_NE, AF_UNIX));
    if (r != 0) {
        seccomp_release(ctx);
        return agti_error(AGT_EIO, "sandbox: building the seccomp filter: %s", strerror(-r));
    }
    int fd = memfd_create("agt-seccomp", MFD_CLOEXEC);
    if (fd < 0) {
        seccomp_release(ctx);
        return agti_error(AGT_EIO, "sandbox: memfd_create: %s", strerror(errno));
    }
    r = seccomp_export_bpf(ctx, fd);
    seccomp_release(ctx);
    off_t size = r == 0 ? lseek(fd, 0, SEEK_END) : -1;
    if (r != 0 || size <= 0 || size % (off_t)sizeof(struct sock_filter) != 0 ||
        size / (off_t)sizeof(struct sock_filter) > BPF_MAXINSNS) {
        close(fd);
        return agti_error(AGT_EIO, "sandbox: exporting the seccomp filter failed");
    }
    void *buf = malloc((size_t)size);
    if (buf == NULL) {
        close(fd);
        return agti_oom();
    }
    ssize_t got = pread(fd, buf, (size_t)size, 0);
    close(fd);
    if (got != size) {
        free(buf);
        return agti_error(AGT_EIO, "sandbox: reading back the seccomp filter failed");
    }
    out->filter = buf;
    out->len = (unsigned short)(size / (off_t)sizeof(struct sock_filter));
    return AGT_OK;
}

int agti_sb_seccomp_load(const agti_sb_bpf *bpf)
{
    struct sock_fprog prog = {.len = bpf->len, .filter = (struct sock_filter *)bpf->filter};
    return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) == 0 ? 0 : -1;
}

#else

bool agti_sb_seccomp_available(void)
{
    return false;
}

int agti_sb_seccomp_build(bool no_network, agti_sb_bpf *out)
{
    (void)no_network;
    memset(out, 0, sizeof *out);
    return agti_error(AGT_EUNSUPPORTED, "sandbox: built without libseccomp");
}

int agti_sb_seccomp_load(const agti_sb_bpf *bpf)
{
    (void)bpf;
    errno = ENOSYS;
    return -1;
}

#endif
