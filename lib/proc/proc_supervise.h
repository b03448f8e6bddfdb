/* Internal to lib/proc: supervised spawning (supervise.c). */
#ifndef AGT_LIB_PROC_SUPERVISE_H
#define AGT_LIB_PROC_SUPERVISE_H

#include <stdbool.h>
#include <sys/types.h>

#include "core/core.h"
#include "sandbox/sandbox.h"

/* How a command's descendants are contained. */
enum {
    AGTI_SUP_NONE = 0, /* the shell is our child directly (process group only) */
    AGTI_SUP_PIDNS,    /* an init of ours in a new PID namespace */
    AGTI_SUP_SUBREAPER /* a subreaper supervisor of ours */
};

typedef struct agti_spawn_req {
    const char *shell;
    char *const *argv;
    char *const *envp;
    const char *cwd;             /* NULL: inherit */
    int out_fd;                  /* becomes stdout and stderr */
    const agti_sandbox *sandbox; /* NULL: none */
} agti_spawn_req;

/*
 * Starts the shell under supervisor `mode`, inside the sandbox. Returns once
 * the shell has been exec'd (or failed to be: the error names the step).
 * *pid_out: the process to wait for and signal (the supervisor, or the
 * shell for AGTI_SUP_NONE); *status_fd: the non-blocking read end that
 * receives the shell's wait status (an int) when the supervisor ends
 * normally, -1 for AGTI_SUP_NONE.
 */
int agti_spawn_supervised(const agti_spawn_req *r, int mode, pid_t *pid_out, int *status_fd);

#endif
