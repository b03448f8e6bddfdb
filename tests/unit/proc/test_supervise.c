/*
 * Supervisors (issue 14, "processes that escape"): a `setsid -f sleep 1000`
 * and a fork-setsid-fork daemon started by a command are gone after its
 * timeout, after a stop (TaskStop) and after its normal end, under the PID
 * namespace init and under the subreaper supervisor, for a single process
 * and for background tasks. Proven by scanning /proc for a marker in the
 * processes' environment, which every descendant inherits.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "proc/proc.h"
#include "sandbox/sandbox.h"

static char dir[PATH_MAX - 64];
static char mark[64];

/* Processes whose environment holds our marker. */
static int marked(void)
{
    DIR *d = opendir("/proc");
    if (d == NULL)
        return -1;
    int n = 0;
    struct dirent *e;
    size_t ml = strlen(mark);
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        char path[300];
        snprintf(path, sizeof path, "/proc/%s/environ", e->d_name);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        static char buf[1 << 16];
        ssize_t got = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (got <= 0)
            continue;
        for (ssize_t i = 0; i + (ssize_t)ml <= got; i++) {
            if (memcmp(buf + i, mark, ml) == 0 && (i == 0 || buf[i - 1] == '\0')) {
                n++;
                break;
            }
        }
    }
    closedir(d);
    return n;
}

/* Starts two escapees, waits until both run, prints ready; then `tail`. */
static char *command(const char *tail)
{
    return agti_aprintf("rm -f d1 d2; setsid -f sh -c 'touch d1; exec sleep 1000'; "
                        "( setsid sh -c '( touch d2; exec sleep 1000 ) & exit 0' & ); "
                        "while [ ! -e d1 ] || [ ! -e d2 ]; do sleep 0.01; done; echo ready; %s",
                        tail);
}

static void opts(agti_proc_opts *o, int mode, const char *const *env)
{
    agti_proc_opts_init(o);
    o->cwd = dir;
    o->env = env;
    o->supervise = mode;
    o->grace_ms = 200;
}

/* Pumps until the output says ready (the escapees run). */
static bool wait_ready(agti_proc *p)
{
    for (int i = 0; i < 100000 && !agti_proc_done(p); i++) {
        agti_proc_pump(p, 100);
        char *out = NULL;
        agti_proc_output(p, &out, NULL);
        bool ready = out && strstr(out, "ready");
        free(out);
        if (ready)
            return true;
    }
    return false;
}

static void test_mode(int mode, const char *name)
{
    char env_mark[80];
    snprintf(env_mark, sizeof env_mark, "%s", mark);
    const char *env[] = {env_mark, NULL};
    agti_proc_opts o;

    /* timeout */
    opts(&o, mode, env);
    o.timeout_ms = 3000;
    char *cmd = command("sleep 1000");
    agti_proc *p = NULL;
    int rc = agti_proc_spawn(&p, cmd, &o);
    T_EQ_INT(rc, AGT_OK, "%s: spawn", name);
    if (rc != AGT_OK) {
        t_diag("%s", agt_error_message());
        free(cmd);
        return;
    }
    T_EQ_INT(agti_proc_supervisor(p), mode, "%s: the supervisor asked for is in force", name);
    T_CHECK(wait_ready(p), "%s: the escapees started", name);
    int running = marked();
    T_CHECK(running >= 3, "%s: shell, setsid child and daemon are alive (%d)", name, running);
    agti_proc_wait(p, -1);
    T_EQ_INT(agti_proc_state_get(p), AGTI_PROC_TIMED_OUT, "%s: times out", name);
    T_EQ_INT(marked(), 0, "%s: after the timeout no descendant is left", name);
    agti_proc_free(p);

    /* stop */
    opts(&o, mode, env);
    p = NULL;
    rc = agti_proc_spawn(&p, cmd, &o);
    free(cmd);
    T_CHECK(rc == AGT_OK && wait_ready(p), "%s: started again", name);
    T_CHECK(marked() >= 3, "%s: escapees alive before the stop", name);
    T_EQ_INT(agti_proc_stop(p, "test"), AGT_OK, "%s: stop", name);
    agti_proc_wait(p, -1);
    T_EQ_INT(agti_proc_state_get(p), AGTI_PROC_KILLED, "%s: stopped", name);
    T_EQ_INT(marked(), 0, "%s: after the stop no descendant is left", name);
    agti_proc_free(p);

    /* normal end: the shell exits 0 while the escapees still run */
    opts(&o, mode, env);
    cmd = command("exit 0");
    p = NULL;
    rc = agti_proc_run_to_completion(&p, cmd, &o);
    free(cmd);
    T_EQ_INT(rc, AGT_OK, "%s: normal run", name);
    T_EQ_INT(agti_proc_state_get(p), AGTI_PROC_COMPLETED, "%s: completes with exit 0", name);
    char *out = NULL;
    agti_proc_output(p, &out, NULL);
    T_EQ_STR(out, "ready\n", "%s: output", name);
    free(out);
    T_EQ_INT(marked(), 0, "%s: after the normal end no descendant is left", name);
    agti_proc_free(p);

    /* exit statuses pass through the supervisor */
    opts(&o, mode, env);
    p = NULL;
    agti_proc_run_to_completion(&p, "exit 7", &o);
    T_EQ_INT(agti_proc_exit_code(p), 7, "%s: exit status 7 passes through", name);
    agti_proc_free(p);
    p = NULL;
    agti_proc_run_to_completion(&p, "kill -USR1 $$", &o);
    T_EQ_INT(agti_proc_signal(p), SIGUSR1, "%s: death by a signal passes through", name);
    T_EQ_INT(agti_proc_state_get(p), AGTI_PROC_FAILED, "%s: ... as failed", name);
    agti_proc_free(p);
    p = NULL;
    agti_proc_run_to_completion(&p, "echo $$ > pid.txt; readlink /proc/$$/fd/0", &o);
    out = NULL;
    agti_proc_output(p, &out, NULL);
    T_EQ_STR(out, "/dev/null\n", "%s: $$ and /proc/$$ name the same process", name);
    free(out);
    agti_proc_free(p);
}

static void test_tasks(int mode, const char *name)
{
    char env_mark[80];
    snprintf(env_mark, sizeof env_mark, "%s", mark);
    const char *env[] = {env_mark, NULL};
    agti_tasks_opts mo = {.log_dir = dir};
    agti_tasks *m = NULL;
    T_EQ_INT(agti_tasks_new(&m, &mo), AGT_OK, "%s tasks: manager", name);
    agti_proc_opts o;
    opts(&o, mode, env);
    char *cmd = command("sleep 1000");
    char id[16];
    T_EQ_INT(agti_tasks_start(m, cmd, "escapees", &o, id), AGT_OK, "%s tasks: started", name);
    free(cmd);
    char log[PATH_MAX + 32];
    snprintf(log, sizeof log, "%s/%s.log", dir, id);
    /* wait until the task's log says ready */
    bool ready = false;
    for (int i = 0; i < 100000 && !ready; i++) {
        agti_tasks_pump(m, 100);
        char *tail = NULL;
        size_t len = 0;
        if (agti_tasks_tail(m, id, 0, &tail, &len) == AGT_OK)
            ready = strstr(tail, "ready") != NULL;
        free(tail);
    }
    T_CHECK(ready && marked() >= 3, "%s tasks: escapees alive", name);
    T_EQ_INT(agti_tasks_stop(m, id, "TaskStop"), AGT_OK, "%s tasks: TaskStop", name);
    agti_tasks_wait(m, id, -1);
    T_EQ_INT(marked(), 0, "%s tasks: after TaskStop no descendant is left", name);

    opts(&o, mode, env);
    cmd = command("exit 0");
    T_EQ_INT(agti_tasks_start(m, cmd, "escapees", &o, id), AGT_OK, "%s tasks: started again", name);
    free(cmd);
    agti_tasks_wait(m, id, -1);
    agti_task_info info;
    agti_tasks_get(m, id, &info);
    T_EQ_INT(info.state, AGTI_PROC_COMPLETED, "%s tasks: completes", name);
    T_EQ_INT(marked(), 0, "%s tasks: after the normal end no descendant is left", name);

    opts(&o, mode, env);
    cmd = command("sleep 1000");
    T_EQ_INT(agti_tasks_start(m, cmd, "escapees", &o, id), AGT_OK, "%s tasks: a third one", name);
    free(cmd);
    ready = false;
    for (int i = 0; i < 100000 && !ready; i++) {
        agti_tasks_pump(m, 100);
        char *tail = NULL;
        size_t len = 0;
        if (agti_tasks_tail(m, id, 0, &tail, &len) == AGT_OK)
            ready = strstr(tail, "ready") != NULL;
        free(tail);
    }
    agti_tasks_free(m);
    T_EQ_INT(marked(), 0, "%s tasks: freeing the manager leaves no descendant", name);
}

int main(void)
{
    const char *t = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/agt-supervise-XXXXXX", t && t[0] == '/' ? t : "/tmp");
    if (mkdtemp(dir) == NULL)
        return 1;
    snprintf(mark, sizeof mark, "AGT_SUPERVISE_MARK=%d-%ld", (int)getpid(), (long)time(NULL));
    T_EQ_INT(marked(), 0, "no marked process before the tests");

    const agti_sandbox_probe *pr = agti_sandbox_probe_get();
    if (pr->pid_ns && pr->root) {
        test_mode(AGTI_PROC_SUPERVISE_PIDNS, "pid namespace");
        test_tasks(AGTI_PROC_SUPERVISE_PIDNS, "pid namespace");
    } else {
        t_skip("PID namespace without a sandbox needs root here");
    }
    if (pr->subreaper) {
        test_mode(AGTI_PROC_SUPERVISE_SUBREAPER, "subreaper");
        test_tasks(AGTI_PROC_SUPERVISE_SUBREAPER, "subreaper");
    } else {
        t_skip("PR_SET_CHILD_SUBREAPER is not available");
    }

    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        t_diag("cleanup failed");
    return t_done();
}
