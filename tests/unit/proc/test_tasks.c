/*
 * Background task manager: ids, the concurrency limit, 500 tasks with no
 * descriptor or zombie left, stop (running and finished), wait with a
 * timeout, one finished event per task, log tail, list, SIGCHLD left alone.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "proc/proc.h"

static char logdir[PATH_MAX];

static int count_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL)
        if (e->d_name[0] != '.')
            n++;
    if (d)
        closedir(d);
    return n;
}

static bool is_task_id(const char *id)
{
    if (strlen(id) != 13 || strncmp(id, "bash-", 5) != 0)
        return false;
    for (int i = 5; i < 13; i++)
        if (!strchr("0123456789abcdef", id[i]))
            return false;
    return true;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void test_many(void)
{
    int fds_before = count_fds();
    agti_tasks_opts mo = {.log_dir = logdir, .max_running = 32};
    agti_tasks *m;
    T_EQ_INT(agti_tasks_new(&m, &mo), AGT_OK, "manager");
    enum { N = 500 };
    char ids[N][16];
    int started = 0, refused = 0, bad_ids = 0;
    while (started < N) {
        char cmd[64];
        snprintf(cmd, sizeof cmd, "echo task %d", started);
        int rc = agti_tasks_start(m, cmd, "numbered", NULL, ids[started]);
        if (rc == AGT_ELIMIT) {
            if (refused++ == 0) {
                T_EQ_INT(agti_tasks_running(m), 32, "refused exactly at the limit");
                T_CHECK(strstr(agt_error_message(), "limit is 32") != NULL,
                        "refusal names the limit: %s", agt_error_message());
            }
            agti_tasks_pump(m, 50);
            continue;
        }
        if (rc != AGT_OK) {
            T_CHECK(0, "start failed: %s", agt_error_message());
            break;
        }
        bad_ids += !is_task_id(ids[started]);
        started++;
    }
    T_EQ_INT(started, N, "500 tasks started");
    T_CHECK(refused > 0, "the limit was hit and refused (%d times)", refused);
    T_EQ_INT(bad_ids, 0, "ids are bash- + 8 hex digits");
    while (agti_tasks_running(m) > 0)
        agti_tasks_pump(m, 100);

    agti_task_event *ev;
    size_t nev;
    T_EQ_INT(agti_tasks_take_events(m, &ev, &nev), AGT_OK, "take events");
    T_EQ_INT(nev, N, "one finished event per task");
    int bad = 0;
    char *sorted_ev[N], *sorted_ids[N];
    for (size_t i = 0; i < nev && i < N; i++) {
        char want[64];
        /* Events come in the order the tasks were seen finishing; match by id. */
        int k = -1;
        for (int j = 0; j < N; j++)
            if (strcmp(ids[j], ev[i].id) == 0)
                k = j;
        snprintf(want, sizeof want, "task %d\n", k);
        if (k < 0 || ev[i].state != AGTI_PROC_COMPLETED || ev[i].exit_code != 0 ||
            strcmp(ev[i].preview, want) != 0 || strstr(ev[i].log_path, ev[i].id) == NULL)
            bad++;
        sorted_ev[i] = ev[i].id;
    }
    T_EQ_INT(bad, 0, "every event: completed, exit 0, its own output, its log");
    for (int i = 0; i < N; i++)
        sorted_ids[i] = ids[i];
    int dup = 0, mismatch = 0;
    if (nev == N) {
        qsort(sorted_ev, N, sizeof(char *), cmp_str);
        qsort(sorted_ids, N, sizeof(char *), cmp_str);
        for (int i = 0; i < N; i++) {
            mismatch += strcmp(sorted_ev[i], sorted_ids[i]) != 0;
            dup += i > 0 && strcmp(sorted_ids[i], sorted_ids[i - 1]) == 0;
        }
    }
    T_EQ_INT(dup, 0, "ids are unique");
    T_EQ_INT(mismatch, 0, "events name exactly the started tasks");
    agti_task_events_free(ev, nev);
    T_EQ_INT(agti_tasks_take_events(m, &ev, &nev), AGT_OK, "take events again");
    T_EQ_INT(nev, 0, "no event twice");
    T_EQ_INT(agti_tasks_count(m), 256, "finished tasks kept up to max_finished");

    T_EQ_INT(count_fds(), fds_before, "no descriptor left open");
    errno = 0;
    T_CHECK(waitpid(-1, NULL, WNOHANG) == -1 && errno == ECHILD, "no zombie left");

    char *tail;
    T_EQ_INT(agti_tasks_tail(m, ids[N - 1], 0, &tail, NULL), AGT_OK, "tail of the last task");
    T_EQ_STR(tail, "task 499\n", "its log");
    free(tail);
    T_EQ_INT(agti_tasks_tail(m, ids[0], 0, &tail, NULL), AGT_ENOTFOUND,
             "the oldest finished task was forgotten");
    for (int i = 0; i < N; i++) {
        char path[PATH_MAX + 64];
        snprintf(path, sizeof path, "%s/%.13s.log", logdir, ids[i]);
        unlink(path);
    }
    agti_tasks_free(m);
}

static void test_stop_wait(void)
{
    agti_tasks_opts mo = {.log_dir = logdir, .max_running = 4};
    agti_tasks *m;
    agti_tasks_new(&m, &mo);
    agti_proc_opts po;
    agti_proc_opts_init(&po);
    po.grace_ms = 200;
    char slow[16], quick[16], seq[16];
    T_EQ_INT(agti_tasks_start(m, "sleep 100", "sleeper", &po, slow), AGT_OK, "start sleeper");
    T_EQ_INT(agti_tasks_start(m, "exit 3", "three", &po, quick), AGT_OK, "start exit 3");
    T_EQ_INT(agti_tasks_start(m, "seq 1 10000", "numbers", &po, seq), AGT_OK, "start seq");

    T_EQ_INT(agti_tasks_wait(m, slow, 100), AGT_ETIMEOUT, "wait 100 ms: still running");
    T_CHECK(strstr(agt_error_message(), slow) != NULL, "timeout message names the task");
    T_EQ_INT(agti_tasks_wait(m, quick, -1), AGT_OK, "wait for exit 3");
    T_EQ_INT(agti_tasks_wait(m, seq, 5000), AGT_OK, "wait for seq");

    agti_task_info info;
    T_EQ_INT(agti_tasks_get(m, quick, &info), AGT_OK, "get");
    T_EQ_INT(info.state, AGTI_PROC_FAILED, "exit 3 is failed");
    T_EQ_INT(info.exit_code, 3, "exit code 3");
    T_EQ_STR(info.description, "three", "description kept");
    T_EQ_STR(info.command, "exit 3", "command kept");

    agti_task_info list[8];
    size_t n;
    agti_tasks_list(m, true, list, 8, &n);
    T_EQ_INT(n, 1, "one active task");
    T_EQ_STR(n ? list[0].id : NULL, slow, "the sleeper");
    agti_tasks_list(m, false, list, 8, &n);
    T_EQ_INT(n, 3, "three tasks in all");
    T_EQ_STR(n == 3 ? list[0].id : NULL, seq, "newest first");

    T_EQ_INT(agti_tasks_stop(m, quick, "late"), AGT_ESTATE, "stopping a finished task");
    T_CHECK(strstr(agt_error_message(), "already finished (failed)") != NULL,
            "message says it finished: %s", agt_error_message());
    T_EQ_INT(agti_tasks_stop(m, "bash-00000000", "x"), AGT_ENOTFOUND, "unknown id");
    T_EQ_INT(agti_tasks_stop(m, slow, "no longer needed"), AGT_OK, "stop the sleeper");
    T_EQ_INT(agti_tasks_wait(m, slow, -1), AGT_OK, "wait after stop");
    agti_tasks_get(m, slow, &info);
    T_EQ_INT(info.state, AGTI_PROC_KILLED, "stopped task is killed");
    T_EQ_STR(info.reason, "stopped: no longer needed", "with the reason");
    T_EQ_INT(agti_tasks_stop(m, slow, "again"), AGT_ESTATE, "stopping it again");

    /* seq 1 10000 writes 48894 bytes; the last 100 are "...9981\n" through
     * "10000\n" starting inside "9981" (from `seq 1 10000 | tail -c 100`). */
    char *tail;
    size_t len;
    T_EQ_INT(agti_tasks_tail(m, seq, 100, &tail, &len), AGT_OK, "tail 100");
    T_EQ_INT(len, 100, "100 bytes");
    T_CHECK(tail && strncmp(tail, "981\n9982\n", 9) == 0, "starts where tail -c 100 starts");
    T_CHECK(tail && strcmp(tail + len - 11, "9999\n10000\n") == 0, "ends with the last lines");
    free(tail);
    T_EQ_INT(agti_tasks_tail(m, seq, 0, &tail, &len), AGT_OK, "default tail (32 KiB)");
    T_EQ_INT(len, 32768, "32 KiB of a 48894-byte log");
    free(tail);

    agti_task_event *ev;
    size_t nev;
    agti_tasks_take_events(m, &ev, &nev);
    T_EQ_INT(nev, 3, "three events");
    int seen_slow = 0, seen_quick = 0, seen_seq = 0;
    for (size_t i = 0; i < nev; i++) {
        if (strcmp(ev[i].id, slow) == 0)
            seen_slow += ev[i].state == AGTI_PROC_KILLED && ev[i].reason &&
                         strcmp(ev[i].reason, "stopped: no longer needed") == 0;
        if (strcmp(ev[i].id, quick) == 0)
            seen_quick += ev[i].state == AGTI_PROC_FAILED && ev[i].exit_code == 3;
        if (strcmp(ev[i].id, seq) == 0)
            seen_seq +=
                strlen(ev[i].preview) == 2048 && strcmp(ev[i].preview + 2048 - 6, "10000\n") == 0;
    }
    T_EQ_INT(seen_slow, 1, "event: stopped task with its reason");
    T_EQ_INT(seen_quick, 1, "event: failed task with its exit code");
    T_EQ_INT(seen_seq, 1, "event: preview is the last 2048 bytes");
    agti_task_events_free(ev, nev);

    /* Freeing the manager kills what still runs. */
    char left[16];
    agti_tasks_start(m, "trap '' TERM; sleep 100", "left", &po, left);
    agti_tasks_get(m, left, &info);
    pid_t pid = info.pid;
    const char *ids[] = {slow, quick, seq, left};
    char paths[4][PATH_MAX + 64];
    for (int i = 0; i < 4; i++)
        snprintf(paths[i], sizeof paths[i], "%s/%s.log", logdir, ids[i]);
    agti_tasks_free(m);
    T_CHECK(kill(pid, 0) == -1 && errno == ESRCH, "a running task dies with its manager");
    for (int i = 0; i < 4; i++)
        unlink(paths[i]);
    T_EQ_INT(agti_tasks_new(&m, &(agti_tasks_opts){0}), AGT_EINVAL, "log_dir is required");
}

static void chld_handler(int sig)
{
    (void)sig;
}

int main(void)
{
    snprintf(logdir, sizeof logdir, "/tmp/agt-tasks-XXXXXX");
    if (mkdtemp(logdir) == NULL)
        return 1;
    struct sigaction sa, before, after;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = chld_handler;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGCHLD, &sa, NULL);
    sigaction(SIGCHLD, NULL, &before);

    test_many();
    test_stop_wait();

    sigaction(SIGCHLD, NULL, &after);
    T_CHECK(after.sa_handler == chld_handler && after.sa_flags == before.sa_flags,
            "the host's SIGCHLD disposition is unchanged");
    rmdir(logdir);
    return t_done();
}
