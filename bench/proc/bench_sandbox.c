/*
 * What the sandbox costs a command, through the public API, whole call:
 *
 *   sandboxed    agt_session_dispatch(Bash {"command":"true"}) with the
 *                session in workspace-write, network off (Landlock, seccomp,
 *                user + mount namespace with the protected paths mounted
 *                read-only, PID namespace supervisor)
 *   unsandboxed  the same call with the sandbox off (still supervised: the
 *                PID namespace as root, the subreaper otherwise)
 *   bash -c true posix_spawn("/bin/bash -c true"), output pipe read to EOF,
 *                waitpid: what a host without the library would do
 *
 * Outputs are compared first (the two Bash results must be the same text;
 * bash -c true must print nothing). Rounds alternate between the rows (the
 * order rotates, so no row always runs first); each call is timed whole, from
 * dispatch to the result (the command's processes reaped, its placeholders
 * removed). Printed: the median per row, the ratios of those medians, and
 * the median of the per-round ratios (each round's rows run back to back,
 * so a load change between rounds cancels out), from this one run, with
 * the load average before and after. Usage: bench-sandbox [rounds, default
 * 300, at least 11]
 */
#include <agenttools/agenttools.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "../bench_stats.h"

extern char **environ;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* bash -c true with a pipe for its output; returns the bytes it printed. */
static long bash_true(void)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
    char *argv[] = {(char *)"/bin/bash", (char *)"-c", (char *)"true", NULL};
    pid_t pid;
    int rc = posix_spawn(&pid, "/bin/bash", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    if (rc != 0) {
        close(fds[0]);
        return -1;
    }
    char buf[4096];
    long total = 0;
    ssize_t got;
    while ((got = read(fds[0], buf, sizeof buf)) > 0)
        total += got;
    close(fds[0]);
    int st;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? total : -1;
}

/* One Bash call; the result text (malloc'd) or NULL. */
static char *bash_call(agt_session *s)
{
    agt_result *r = NULL;
    if (agt_session_dispatch(s, "b", "Bash", "{\"command\":\"true\"}", &r) != AGT_OK || r == NULL)
        return NULL;
    char *t = agt_result_is_error(r) ? NULL : strdup(agt_result_text(r));
    agt_result_free(r);
    return t;
}

static agt_session *session(agt_registry *reg, const char *ws, const char *logs, int mode)
{
    agt_session *s = NULL;
    if (agt_session_new(&s, reg, ws) != AGT_OK)
        return NULL;
    agt_session_set_mode(s, AGT_MODE_YOLO);
    agt_session_set_task_log_dir(s, logs);
    if (agt_session_set_sandbox(s, mode, AGT_SANDBOX_NETWORK_OFF,
                                mode == AGT_SANDBOX_OFF ? AGT_SANDBOX_BEST_EFFORT
                                                        : AGT_SANDBOX_REQUIRE) != AGT_OK) {
        fprintf(stderr, "bench-sandbox: %s\n", agt_error_message());
        agt_session_free(s);
        return NULL;
    }
    return s;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 300;
    if (n < 11)
        n = 11;
    double load0[3] = {0, 0, 0}, load1[3] = {0, 0, 0};
    getloadavg(load0, 3);
    char base[256], ws[300], logs[300];
    const char *t = getenv("TMPDIR");
    snprintf(base, sizeof base, "%s/agt-bench-sb-XXXXXX", t && t[0] == '/' ? t : "/tmp");
    if (mkdtemp(base) == NULL)
        return 1;
    snprintf(ws, sizeof ws, "%s/ws", base);
    snprintf(logs, sizeof logs, "%s/logs", base);
    mkdir(ws, 0755);
    agt_registry *reg = NULL;
    if (agt_registry_new(&reg) != AGT_OK || agt_registry_load_builtin(reg, "chat") != AGT_OK)
        return 1;
    char *probe = NULL;
    agt_sandbox_probe(&probe);
    printf("sandbox probe: %s\n", probe);
    agt_free(probe);
    agt_session *sb = session(reg, ws, logs, AGT_SANDBOX_WORKSPACE_WRITE);
    agt_session *plain = session(reg, ws, logs, AGT_SANDBOX_OFF);
    if (sb == NULL || plain == NULL) {
        printf("bench-sandbox: the sandbox cannot be enforced here; nothing to measure\n");
        return 0;
    }
    char *status = NULL;
    agt_session_sandbox_status(sb, &status);
    printf("sandboxed session: %s\n", status);
    agt_free(status);

    /* outputs first */
    char *a = bash_call(sb), *b = bash_call(plain);
    long bt = bash_true();
    if (a == NULL || b == NULL || strcmp(a, b) != 0 || bt != 0) {
        fprintf(stderr, "bench-sandbox: outputs differ:\n[%s]\n[%s]\nbash -c true: %ld bytes\n",
                a ? a : "(error)", b ? b : "(error)", bt);
        return 1;
    }
    printf("outputs: identical (%zu bytes of result text; bash -c true prints nothing)\n",
           strlen(a));
    free(a);
    free(b);

    double *ts = malloc(sizeof(double) * (size_t)n), *tp = malloc(sizeof(double) * (size_t)n),
           *tb = malloc(sizeof(double) * (size_t)n);
    for (int i = 0; i < n; i++) {
        /* rotate the order each round so no row always runs first */
        for (int k = 0; k < 3; k++) {
            int row = (i + k) % 3;
            double t0 = now_s();
            if (row == 0) {
                free(bash_call(sb));
                ts[i] = now_s() - t0;
            } else if (row == 1) {
                free(bash_call(plain));
                tp[i] = now_s() - t0;
            } else {
                bash_true();
                tb[i] = now_s() - t0;
            }
        }
    }
    getloadavg(load1, 3);
    double *rsp = malloc(sizeof(double) * (size_t)n), *rsb = malloc(sizeof(double) * (size_t)n),
           *rpb = malloc(sizeof(double) * (size_t)n);
    for (int i = 0; i < n; i++) {
        rsp[i] = ts[i] / tp[i];
        rsb[i] = ts[i] / tb[i];
        rpb[i] = tp[i] / tb[i];
    }
    double ms = median(ts, n) * 1e3, mp = median(tp, n) * 1e3, mb = median(tb, n) * 1e3;
    printf("rounds: %d (one call per row each, order rotating); load average %.2f before, "
           "%.2f after\n",
           n, load0[0], load1[0]);
    printf("  sandboxed     %8.3f ms (median)\n", ms);
    printf("  unsandboxed   %8.3f ms\n", mp);
    printf("  bash -c true  %8.3f ms\n", mb);
    printf("ratio sandboxed / unsandboxed:  %.2fx of medians, %.2fx median per round (target <= "
           "1.3x)\n",
           ms / mp, median(rsp, n));
    printf("ratio sandboxed / bash -c true: %.2fx of medians, %.2fx median per round\n", ms / mb,
           median(rsb, n));
    printf("ratio unsandboxed / bash -c true: %.2fx of medians, %.2fx median per round\n", mp / mb,
           median(rpb, n));
    free(ts);
    free(tp);
    free(tb);
    free(rsp);
    free(rsb);
    free(rpb);
    agt_session_free(sb);
    agt_session_free(plain);
    agt_registry_free(reg);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", base);
    return system(cmd) == 0 ? 0 : 1;
}
