/* Internal to lib/sandbox (and the process engine's supervisor): the BPF
 * program, and the raw helpers the child uses. */
#ifndef AGT_LIB_SANDBOX_INTERNAL_H
#define AGT_LIB_SANDBOX_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

/* A compiled classic BPF program (struct sock_filter entries, 8 bytes each). */
typedef struct agti_sb_bpf {
    void *filter;
    unsigned short len; /* entries; 0 = none */
} agti_sb_bpf;

/* Whether seccomp filters can be built and loaded here. */
bool agti_sb_seccomp_available(void);
/* Compiles the filter (no_network: socket() for anything but AF_UNIX fails
 * with EACCES). AGT_EIO / AGT_ENOMEM on failure. */
int agti_sb_seccomp_build(bool no_network, agti_sb_bpf *out);
/* Loads it into the calling thread (no_new_privs already set);
 * async-signal-safe. 0 or -1 with errno. */
int agti_sb_seccomp_load(const agti_sb_bpf *bpf);

/* Writes "deny" to setgroups and the two maps of the calling process;
 * async-signal-safe. 0 or -1 with errno. */
int agti_sb_write_idmaps(const char *uid_map, const char *gid_map);
/* clone(flags | SIGCHLD) without a new stack: fork semantics, no atfork
 * handlers. Returns what the system call returns (0 in the child). */
long agti_sb_raw_clone(unsigned long flags);

/* ---- placeholders of protected paths (reserve.c) ---- */

typedef struct agti_sb_resv agti_sb_resv;

enum { AGTI_SB_RESV_NONE = 0, AGTI_SB_RESV_HELD = 1 };

/*
 * Holds the protected path `path` (an empty folder when is_dir, else an
 * empty file) for one sandbox: creates it when missing (its parent must
 * exist), marks what it created as a placeholder, and takes a shared flock
 * on it so that no other host process removes it meanwhile. Returns
 * AGTI_SB_RESV_HELD with *out set (release it with agti_sb_resv_release),
 * AGTI_SB_RESV_NONE when the path is something else (a symbolic link, a
 * folder where a file is expected, unreadable) and nothing is held, or -1
 * with errno.
 */
int agti_sb_resv_acquire(const char *path, bool is_dir, agti_sb_resv **out);
/*
 * Drops one hold of each of v[0..n) (NULL entries are skipped). all_gone:
 * every process that may have the paths mounted has ended. The last hold of
 * a placeholder removes it when no holder said otherwise, no other host
 * process holds it, and it is still empty; a path the user had is never
 * removed. The name is gone when this returns; the descriptors of what was
 * removed are closed by a short-lived thread (their inodes' eviction waits
 * for the disk on some filesystems).
 */
void agti_sb_resv_release(agti_sb_resv *const *v, size_t n, bool all_gone);
/* Waits until the descriptors handed to closing threads are all closed. */
void agti_sb_resv_settle(void);

#endif
