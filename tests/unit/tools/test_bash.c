/* Bash, TaskList, TaskOutput, TaskStop through agt_session_dispatch, and the
 * task_finished events of agt_session_tick. Expected texts follow the result
 * formats documented in docs/tasks.md; outputs were checked against bash. */
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agenttools/agenttools.h"
#include "sandbox/sandbox.h"
#include "harness.h"

/* A test name must stay on one line (TAP). */
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

static agt_registry *reg;
static char ws[256], logs[300];

static agt_session *new_session(int max_tasks, int bg_on_timeout)
{
    agt_session *s = NULL;
    if (agt_session_new(&s, reg, ws) != AGT_OK)
        return NULL;
    agt_session_set_mode(s, AGT_MODE_YOLO);
    agt_session_set_task_log_dir(s, logs);
    if (max_tasks > 0)
        agt_session_set_max_tasks(s, max_tasks);
    agt_session_set_background_on_timeout(s, bg_on_timeout);
    return s;
}

/* Dispatches and returns the result (never NULL: a failed dispatch aborts
 * the test with a message). */
static agt_result *call(agt_session *s, const char *tool, const char *args)
{
    agt_result *r = NULL;
    int rc = agt_session_dispatch(s, "c", tool, args, &r);
    if (rc != AGT_OK || r == NULL) {
        printf("Bail out! dispatch %s %s: %d %s\n", tool, args, rc, agt_error_message());
        exit(1);
    }
    return r;
}

static void text_is(agt_session *s, const char *args, const char *want, int want_error,
                    const char *name)
{
    agt_result *r = call(s, "Bash", args);
    T_EQ_STR(agt_result_text(r), want, "%s: text", name);
    T_EQ_INT(agt_result_is_error(r), want_error, "%s: is_error", name);
    agt_result_free(r);
}

static int contains(const char *hay, const char *needle)
{
    return hay != NULL && strstr(hay, needle) != NULL;
}

/* A string field of the result's JSON, copied. */
static char *json_field(const agt_result *r, const char *key)
{
    const char *j = agt_result_json(r);
    if (j == NULL)
        return NULL;
    json_t *v = json_loads(j, 0, NULL);
    const char *s = json_string_value(json_object_get(v, key));
    char *out = s ? strdup(s) : NULL;
    json_decref(v);
    return out;
}

static char *start_bg(agt_session *s, const char *command, const char *extra)
{
    char args[512];
    json_t *c = json_string(command);
    char *q = json_dumps(c, JSON_ENCODE_ANY);
    snprintf(args, sizeof args,
             "{\"command\":%s,\"run_in_background\":true,\"description\":\"test task\"%s}", q,
             extra ? extra : "");
    free(q);
    json_decref(c);
    agt_result *r = call(s, "Bash", args);
    char *id = json_field(r, "task_id");
    if (id == NULL)
        t_diag("start failed: %s", agt_result_text(r));
    agt_result_free(r);
    return id;
}

/* This process's descriptors, once the sandbox's closing threads (the last
 * close of removed placeholders) are done. */
static int count_fds(void)
{
    agti_sandbox_settle();
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    if (d == NULL)
        return -1;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* Files named fg-*.log in the session's log folder. */
static int count_fg_logs(void)
{
    int n = 0;
    DIR *d = opendir(logs);
    if (d == NULL)
        return 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        n += strncmp(e->d_name, "fg-", 3) == 0;
    closedir(d);
    return n;
}

/* Whether the result's JSON has key with the value null. */
static int json_null_field(const agt_result *r, const char *key)
{
    const char *j = agt_result_json(r);
    json_t *v = j ? json_loads(j, 0, NULL) : NULL;
    int is = json_is_null(json_object_get(v, key));
    json_decref(v);
    return is;
}

static void test_fg_logs(void)
{
    /* A foreground command whose whole output is in the result leaves no log
     * behind (nothing to look at); one whose output was cut keeps it. */
    agt_session *s = new_session(0, 0);
    int before = count_fg_logs();
    agt_result *r = call(s, "Bash", "{\"command\":\"echo hi\"}");
    T_EQ_INT(count_fg_logs(), before, "fg log: deleted after a complete output");
    T_CHECK(json_null_field(r, "output_path"), "fg log: output_path null when deleted: %s",
            agt_result_json(r));
    agt_result_free(r);
    r = call(s, "Bash", "{\"command\":\"echo no; exit 3\"}");
    T_EQ_INT(count_fg_logs(), before, "fg log: deleted after a failed command with all output");
    agt_result_free(r);
    /* A command that prints the cut marker naming its own log (the one empty
     * fg log while it runs) is not cut: the log goes, output_path is null. */
    char cmd[1200], want[600];
    snprintf(cmd, sizeof cmd,
             "{\"command\":\"for f in '%s'/fg-*.log; do [ -s \\\"$f\\\" ] || me=\\\"$f\\\"; done; "
             "printf '[... 5 bytes (1 lines) cut; full output in %%s ...]\\\\n' \\\"$me\\\"\"}",
             logs);
    r = call(s, "Bash", cmd);
    snprintf(want, sizeof want, "[... 5 bytes (1 lines) cut; full output in %s/fg-", logs);
    const char *t = agt_result_text(r);
    if (t == NULL)
        t = "";
    T_CHECK(strncmp(t, want, strlen(want)) == 0, "fg log: marker printed: %s", flat(t));
    const char *end = ".log ...]\nCommand completed with exit code 0.";
    T_CHECK(strlen(t) > strlen(end) && strcmp(t + strlen(t) - strlen(end), end) == 0,
            "fg log: printed marker ends the output: %s", flat(t));
    T_EQ_INT(count_fg_logs(), before, "fg log: deleted after a printed marker");
    T_CHECK(json_null_field(r, "output_path"), "fg log: output_path null for a printed marker: %s",
            agt_result_json(r));
    agt_result_free(r);
    r = call(s, "Bash", "{\"command\":\"seq 1 20000\"}");
    T_EQ_INT(count_fg_logs(), before + 1, "fg log: kept when the output was cut");
    char *log = json_field(r, "output_path");
    struct stat sb;
    /* seq 1 20000 | wc -c */
    T_CHECK(log != NULL && stat(log, &sb) == 0 && sb.st_size == 108894,
            "fg log: the cut output's log is whole");
    T_CHECK(log != NULL && contains(agt_result_text(r), log), "fg log: the text names it");
    free(log);
    agt_result_free(r);
    agt_session_free(s);
}

static void test_foreground(void)
{
    agt_session *s = new_session(0, 0);
    text_is(s, "{\"command\":\"echo hi\"}", "hi\nCommand completed with exit code 0.", 0, "exit 0");
    text_is(s, "{\"command\":\"exit 1\"}", "(no output)\nCommand failed with exit code 1.", 1,
            "exit 1 with no output");
    agt_result *r = call(s, "Bash", "{\"command\":\"nonexistent_cmd_xyz\"}");
    T_CHECK(contains(agt_result_text(r),
                     "nonexistent_cmd_xyz: command not found\nCommand failed with exit code 127 "
                     "(command not found)."),
            "exit 127 names the code: %s", flat(agt_result_text(r)));
    T_EQ_INT(agt_result_is_error(r), 1, "exit 127 is an error result");
    agt_result_free(r);
    text_is(s, "{\"command\":\"echo a; echo b >&2; echo c; echo d >&2\"}",
            "a\nb\nc\nd\nCommand completed with exit code 0.", 0, "stdout and stderr merged");
    /* with stdin open cat would wait for the 5 s (5000 ms) timeout and be timed_out */
    text_is(s, "{\"command\":\"cat; echo after\",\"timeout\":5000}",
            "after\nCommand completed with exit code 0.", 0, "stdin is closed");
    text_is(s, "{\"command\":\"printf 'a\\\\377b\\\\n'\"}",
            "a\xef\xbf\xbd"
            "b\nCommand completed with exit code 0.",
            0, "invalid UTF-8 replaced");
    r = call(s, "Bash", "{\"command\":\"echo start; sleep 30\",\"timeout\":1000}");
    T_EQ_STR(agt_result_text(r),
             "start\nCommand timed out after 1 s: its process group was sent SIGTERM, then "
             "SIGKILL after the grace period. Use a longer timeout, or run_in_background for "
             "long commands.",
             "timeout text");
    T_EQ_INT(agt_result_is_error(r), 1, "timeout is an error result");
    char *st = json_field(r, "status");
    T_EQ_STR(st, "timed_out", "timeout status");
    free(st);
    agt_result_free(r);

    /* cwd */
    char sub[300];
    snprintf(sub, sizeof sub, "%s/sub", ws);
    mkdir(sub, 0755);
    char want[400];
    snprintf(want, sizeof want, "%s\nCommand completed with exit code 0.", sub);
    text_is(s, "{\"command\":\"pwd\",\"cwd\":\"sub\"}", want, 0, "cwd relative to the root");
    r = call(s, "Bash", "{\"command\":\"pwd\",\"cwd\":\"/\"}");
    T_CHECK(strncmp(agt_result_text(r), "cwd '/' is refused: ", 20) == 0,
            "cwd outside the workspace refused: %s", flat(agt_result_text(r)));
    T_EQ_INT(agt_result_is_error(r), 1, "cwd outside is an error result");
    agt_result_free(r);
    r = call(s, "Bash", "{\"command\":\"pwd\",\"cwd\":\"../..\"}");
    T_CHECK(strncmp(agt_result_text(r), "cwd '../..' is refused: ", 24) == 0,
            "cwd climbing out refused: %s", flat(agt_result_text(r)));
    agt_result_free(r);
    text_is(s, "{\"command\":\"pwd\",\"cwd\":\"nope\"}",
            "cwd 'nope' is not an existing directory inside the workspace.", 1,
            "cwd that does not exist");
    text_is(s, "{\"command\":\"   \"}", "The command is blank; give the command line to run.", 1,
            "blank command");

    /* huge output: cut for the model, whole in the log (seq 1 200000 | wc -c) */
    r = call(s, "Bash", "{\"command\":\"seq 1 200000\"}");
    const char *t = agt_result_text(r);
    T_CHECK(strncmp(t, "1\n2\n3\n", 6) == 0, "huge output: head kept");
    T_CHECK(contains(t, "200000\nCommand completed with exit code 0."), "huge output: tail kept");
    T_CHECK(contains(t, " cut; full output in "), "huge output: cut marker names the log");
    T_CHECK(strlen(t) < 40000, "huge output: capped (%zu bytes)", strlen(t));
    char *log = json_field(r, "output_path");
    struct stat sb;
    /* stat first: the check's arguments are evaluated in no fixed order */
    bool have_log = log != NULL && stat(log, &sb) == 0;
    T_CHECK(have_log && sb.st_size == 1288895, "huge output: full log on disk (%lld bytes)",
            have_log ? (long long)sb.st_size : -1LL);
    T_CHECK(log != NULL && contains(t, log), "huge output: the text names the log path");
    free(log);
    agt_result_free(r);
    agt_session_free(s);
}

static int find_event(json_t *events, const char *id, json_t **out)
{
    size_t i;
    json_t *e;
    json_array_foreach(events, i, e)
    {
        const char *tid = json_string_value(json_object_get(e, "task_id"));
        if (tid != NULL && strcmp(tid, id) == 0) {
            *out = e;
            return 1;
        }
    }
    return 0;
}

static json_t *tick(agt_session *s)
{
    char *ev = NULL;
    if (agt_session_tick(s, -1, &ev) != AGT_OK)
        return NULL;
    json_t *v = json_loads(ev, 0, NULL);
    agt_free(ev);
    return v;
}

/* 1 when pid is gone or a zombie about to be reaped by its new parent. */
static int process_gone(long pid)
{
    for (int i = 0; i < 100; i++) {
        char path[64], buf[256];
        snprintf(path, sizeof path, "/proc/%ld/stat", pid);
        FILE *f = fopen(path, "r");
        if (f == NULL)
            return 1;
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = '\0';
        const char *p = strrchr(buf, ')');
        if (p != NULL && p[1] == ' ' && p[2] == 'Z')
            return 1;
        usleep(10000);
    }
    return 0;
}

/* Live (non-zombie) processes whose environment holds the entry `mark`: the
 * pids a command prints are its PID namespace's, not ours. */
static int marked_alive(const char *mark)
{
    DIR *d = opendir("/proc");
    int n = 0;
    struct dirent *e;
    size_t ml = strlen(mark);
    while (d && (e = readdir(d)) != NULL) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        char path[300];
        static char buf[1 << 16];
        snprintf(path, sizeof path, "/proc/%s/environ", e->d_name);
        FILE *f = fopen(path, "r");
        if (f == NULL)
            continue;
        size_t got = fread(buf, 1, sizeof buf, f);
        fclose(f);
        for (size_t i = 0; i + ml <= got; i++)
            if (memcmp(buf + i, mark, ml) == 0 && (i == 0 || buf[i - 1] == '\0')) {
                n += !process_gone(strtol(e->d_name, NULL, 10));
                break;
            }
    }
    if (d)
        closedir(d);
    return n;
}

static void test_kill_and_caps(void)
{
    agt_session *s = new_session(0, 0);
    /* shell and grandchild ignore TERM: KILL after the grace period ends both */
    char mark[64], cmd[256];
    snprintf(mark, sizeof mark, "AGT_BASH_MARK=%d", (int)getpid());
    snprintf(cmd, sizeof cmd,
             "{\"command\":\"trap '' TERM; %s sleep 100 & echo $!; wait\",\"timeout\":1000}", mark);
    agt_result *r = call(s, "Bash", cmd);
    long pid = strtol(agt_result_text(r), NULL, 10);
    char *st = json_field(r, "status");
    T_EQ_STR(st, "timed_out", "TERM-ignoring command timed out");
    T_CHECK(pid > 0 && marked_alive(mark) == 0, "grandchild %ld killed with the group", pid);
    free(st);
    agt_result_free(r);
    /* 20 MB of output: stopped at the 16 MiB hard cap, log exactly that long */
    r = call(s, "Bash", "{\"command\":\"yes | head -c 20000000\"}");
    T_CHECK(contains(agt_result_text(r),
                     "\nCommand was stopped: output exceeded the hard cap of 16777216 bytes."),
            "hard cap stated: %s", flat(strrchr(agt_result_text(r), '\n')));
    T_EQ_INT(agt_result_is_error(r), 1, "hard cap is an error result");
    T_CHECK(strlen(agt_result_text(r)) < 40000, "capped text for the model");
    char *log = json_field(r, "output_path");
    struct stat sb;
    T_CHECK(log != NULL && stat(log, &sb) == 0 && sb.st_size == 16777216,
            "log stops at the hard cap");
    free(log);
    agt_result_free(r);
    agt_session_free(s);
}

static void test_background(void)
{
    agt_session *s = new_session(0, 0);
    char *a = start_bg(s, "sleep 0.3; echo done", NULL);
    regex_t re;
    regcomp(&re, "^bash-[0-9a-f]{8}$", REG_EXTENDED | REG_NOSUB);
    T_CHECK(a != NULL && regexec(&re, a, 0, NULL, 0) == 0, "task id format: %s", a ? a : "-");
    regfree(&re);
    agt_result *r = call(s, "Bash", "{\"command\":\"sleep 1\",\"run_in_background\":true}");
    T_EQ_STR(agt_result_text(r),
             "A background command needs a description: a few words saying what it does, shown "
             "in TaskList.",
             "background needs a description");
    agt_result_free(r);

    char *b = start_bg(s, "sleep 30", NULL);
    char *c = start_bg(s, "exit 3", NULL);
    char *d = start_bg(s, "echo x; sleep 30", ",\"timeout\":1000");

    char args[256];
    r = call(s, "TaskList", "{}");
    T_CHECK(contains(agt_result_text(r), "Running background tasks: ") &&
                contains(agt_result_text(r), b) && contains(agt_result_text(r), "[running]"),
            "TaskList shows running tasks: %s", flat(agt_result_text(r)));
    agt_result_free(r);

    snprintf(args, sizeof args, "{\"task_id\":\"%s\",\"block\":true,\"timeout\":20}", a);
    r = call(s, "TaskOutput", args);
    char want[1024];
    json_t *info = json_loads(agt_result_json(r), 0, NULL);
    snprintf(want, sizeof want,
             "Task: %s (test task)\nStatus: completed, exit code 0\nExit code: 0\nOutput path: "
             "%s (5 bytes; read it with Read for everything)\nOutput:\ndone\n",
             a, json_string_value(json_object_get(info, "output_path")));
    T_EQ_STR(agt_result_text(r), want, "TaskOutput block until done");
    json_decref(info);
    agt_result_free(r);

    snprintf(args, sizeof args, "{\"task_id\":\"%s\",\"block\":true,\"timeout\":1}", b);
    r = call(s, "TaskOutput", args);
    T_CHECK(contains(agt_result_text(r), "\nStatus: running\nStill running after waiting 1 s.\n") &&
                contains(agt_result_text(r), "(no output yet)"),
            "TaskOutput block with timeout on a running task: %s", flat(agt_result_text(r)));
    agt_result_free(r);

    snprintf(args, sizeof args, "{\"task_id\":\"%s\"}", b);
    r = call(s, "TaskStop", args);
    snprintf(want, sizeof want,
             "Task %s was stopped; final state: killed (stopped: Stopped by TaskStop).", b);
    T_EQ_STR(agt_result_text(r), want, "TaskStop a running task");
    T_EQ_INT(agt_result_is_error(r), 0, "TaskStop result is not an error");
    agt_result_free(r);
    r = call(s, "TaskStop", args);
    snprintf(want, sizeof want,
             "Task %s had already ended: killed (stopped: Stopped by TaskStop). Nothing was "
             "stopped.",
             b);
    T_EQ_STR(agt_result_text(r), want, "TaskStop a finished task");
    agt_result_free(r);
    r = call(s, "TaskStop", "{\"task_id\":\"bash-00000000\"}");
    T_EQ_STR(agt_result_text(r),
             "No background task with id 'bash-00000000'. TaskList (active_only false) shows the "
             "known tasks.",
             "TaskStop unknown id");
    T_EQ_INT(agt_result_is_error(r), 1, "unknown id is an error result");
    agt_result_free(r);

    /* every task ends with one event */
    json_t *all = json_array();
    for (int i = 0; i < 400 && json_array_size(all) < 4; i++) {
        json_t *ev = tick(s);
        json_array_extend(all, ev);
        json_decref(ev);
        if (json_array_size(all) < 4)
            usleep(20000);
    }
    T_EQ_INT(json_array_size(all), 4, "one task_finished event per task");
    json_t *e;
    if (find_event(all, a, &e)) {
        T_EQ_STR(json_string_value(json_object_get(e, "type")), "task_finished", "event type");
        T_EQ_STR(json_string_value(json_object_get(e, "status")), "completed", "event a status");
        T_EQ_INT(json_integer_value(json_object_get(e, "exit_code")), 0, "event a exit code");
        T_EQ_STR(json_string_value(json_object_get(e, "preview")), "done\n", "event a preview");
        T_CHECK(contains(json_string_value(json_object_get(e, "message")),
                         "(test task) completed with exit code 0."),
                "event a message: %s", flat(json_string_value(json_object_get(e, "message"))));
    } else {
        T_CHECK(0, "event for task a");
    }
    T_CHECK(find_event(all, b, &e) &&
                strcmp(json_string_value(json_object_get(e, "status")), "killed") == 0,
            "event b killed");
    T_CHECK(find_event(all, c, &e) &&
                strcmp(json_string_value(json_object_get(e, "status")), "failed") == 0 &&
                json_integer_value(json_object_get(e, "exit_code")) == 3,
            "event c failed with exit code 3");
    T_CHECK(find_event(all, d, &e) &&
                strcmp(json_string_value(json_object_get(e, "status")), "timed_out") == 0 &&
                json_is_null(json_object_get(e, "exit_code")),
            "event d timed out");
    json_decref(all);
    json_t *none = tick(s);
    T_EQ_INT(json_array_size(none), 0, "events are handed out once");
    json_decref(none);

    r = call(s, "TaskList", "{}");
    T_EQ_STR(agt_result_text(r), "No running background tasks.", "TaskList active_only default");
    agt_result_free(r);
    r = call(s, "TaskList", "{\"active_only\":false,\"limit\":2}");
    T_CHECK(contains(agt_result_text(r), "Background tasks: 4 (newest first, 2 shown)"),
            "TaskList all with limit: %s", flat(agt_result_text(r)));
    agt_result_free(r);
    free(a);
    free(b);
    free(c);
    free(d);
    agt_session_free(s);
}

static void test_limit_and_poll(void)
{
    agt_session *s = new_session(2, 0);
    char *a = start_bg(s, "sleep 30", NULL);
    char *b = start_bg(s, "sleep 30", NULL);
    agt_result *r = call(s, "Bash",
                         "{\"command\":\"sleep 1\",\"run_in_background\":true,"
                         "\"description\":\"third\"}");
    T_CHECK(strncmp(agt_result_text(r), "Cannot start another background task: ", 38) == 0,
            "running-task limit: %s", flat(agt_result_text(r)));
    T_EQ_INT(agt_result_is_error(r), 1, "limit is an error result");
    agt_result_free(r);
    int fds[8];
    size_t n = 0;
    T_EQ_INT(agt_session_poll_fds(s, fds, 8, &n), AGT_OK, "poll_fds");
    T_CHECK(n >= 2 && n <= 4, "poll_fds: %zu descriptors for two tasks", n);
    int64_t dl = 0;
    T_EQ_INT(agt_session_next_deadline(s, 1000000, &dl), AGT_OK, "next_deadline");
    /* the nearest deadline is a 600 s timeout away (the 250 ms EOF wait at most) */
    T_CHECK(dl > 1000000 && dl <= 1000000 + 600000, "next deadline %lld", (long long)dl);
    T_EQ_INT(agt_session_set_max_tasks(s, 5), AGT_ESTATE, "max tasks fixed once tasks ran");
    free(a);
    free(b);
    agt_session_free(s); /* kills and reaps both */
}

static void test_move_to_background(void)
{
    agt_session *s = new_session(0, 1);
    text_is(s, "{\"command\":\"echo quick\"}", "quick\nCommand completed with exit code 0.", 0,
            "movable foreground that ends in time");
    agt_result *r = call(s, "Bash", "{\"command\":\"sleep 2; echo late\",\"timeout\":1000}");
    T_CHECK(strncmp(agt_result_text(r),
                    "The command is still running at its timeout; it moved to the background as "
                    "task bash-",
                    84) == 0,
            "moved to the background: %s", flat(agt_result_text(r)));
    T_EQ_INT(agt_result_is_error(r), 0, "moving is not an error");
    char *id = json_field(r, "task_id");
    agt_result_free(r);
    char args[128];
    snprintf(args, sizeof args, "{\"task_id\":\"%s\",\"block\":true,\"timeout\":20}", id ? id : "");
    r = call(s, "TaskOutput", args);
    T_CHECK(contains(agt_result_text(r), "Status: completed, exit code 0") &&
                contains(agt_result_text(r), "Output:\nlate\n"),
            "moved task finishes: %s", flat(agt_result_text(r)));
    agt_result_free(r);
    json_t *ev = tick(s);
    json_t *e;
    T_EQ_INT(json_array_size(ev), 1, "only the moved task produces an event");
    T_CHECK(id && find_event(ev, id, &e), "event for the moved task");
    json_decref(ev);
    free(id);
    agt_session_free(s);
}

static void test_save_restore(void)
{
    agt_session *a = new_session(0, 0);
    char *run = start_bg(a, "sleep 30", NULL);
    char *done = start_bg(a, "echo saved", NULL);
    char args[128], want[512];
    snprintf(args, sizeof args, "{\"task_id\":\"%s\",\"block\":true,\"timeout\":20}", done);
    agt_result_free(call(a, "TaskOutput", args));
    char *saved = NULL;
    T_EQ_INT(agt_session_save(a, &saved), AGT_OK, "save with tasks");
    agt_session *b = new_session(0, 0);
    T_EQ_INT(agt_session_restore(b, saved, strlen(saved)), AGT_OK, "restore with tasks");
    agt_result *r = call(b, "TaskList", "{\"active_only\":false}");
    snprintf(want, sizeof want,
             "Background tasks: 2\n%s [completed, exit code 0] (from the restored session) - test "
             "task\n  command: echo saved\n%s [lost] (from the restored session) - test task\n  "
             "command: sleep 30",
             done, run);
    T_EQ_STR(agt_result_text(r), want, "restored tasks listed; the running one is lost");
    agt_result_free(r);
    r = call(b, "TaskList", "{}");
    T_EQ_STR(agt_result_text(r), "No running background tasks.", "restored tasks are not active");
    agt_result_free(r);
    snprintf(args, sizeof args, "{\"task_id\":\"%s\"}", done);
    r = call(b, "TaskOutput", args);
    T_CHECK(contains(agt_result_text(r), "\nStatus: completed\nExit code: 0\n") &&
                contains(agt_result_text(r), "Output (end of the log):\nsaved\n"),
            "TaskOutput of a restored task: %s", flat(agt_result_text(r)));
    agt_result_free(r);
    snprintf(args, sizeof args, "{\"task_id\":\"%s\"}", run);
    r = call(b, "TaskStop", args);
    snprintf(want, sizeof want,
             "Task %s had already ended: lost (from the restored session). Nothing was stopped.",
             run);
    T_EQ_STR(agt_result_text(r), want, "TaskStop of a lost task");
    agt_result_free(r);
    const char *bad = "{\"format\":1,\"tasks\":[{\"task_id\":5}]}";
    T_EQ_INT(agt_session_restore(b, bad, strlen(bad)), AGT_EINVALID, "corrupt tasks refused");
    r = call(b, "TaskList", "{\"active_only\":false}");
    T_CHECK(strncmp(agt_result_text(r), "Background tasks: 2\n", 20) == 0,
            "session unchanged after a refused restore");
    agt_result_free(r);
    agt_free(saved);
    free(run);
    free(done);
    agt_session_free(b);
    agt_session_free(a);
}

/* The timeout is in milliseconds, as the reference agents send it: a model
 * that sent "timeout": 120000 got "must be at most 300" when it was taken in
 * seconds, and a background task's explicit timeout was held to the
 * foreground's 5 minutes although its own default is 10. */
static void test_timeout_units(void)
{
    agt_session *s = new_session(0, 0);
    text_is(s, "{\"command\":\"echo two minutes\",\"timeout\":120000}",
            "two minutes\nCommand completed with exit code 0.", 0, "timeout 120000 ms accepted");
    text_is(s, "{\"command\":\"echo five\",\"timeout\":300000}",
            "five\nCommand completed with exit code 0.", 0, "timeout 300000 ms (the maximum)");
    text_is(s, "{\"command\":\"echo never\",\"timeout\":300001}",
            "timeout 300001 ms is over the foreground maximum of 300000 ms (5 minutes); the "
            "timeout is in milliseconds. For a longer command use run_in_background true (up to "
            "86400000 ms, a day).",
            1, "foreground timeout over 5 minutes");
    /* 1500 ms: not whole seconds, so the text gives milliseconds */
    text_is(s, "{\"command\":\"sleep 30\",\"timeout\":1500}",
            "(no output)\nCommand timed out after 1500 ms: its process group was sent SIGTERM, "
            "then SIGKILL after the grace period. Use a longer timeout, or run_in_background for "
            "long commands.",
            1, "1500 ms timeout");

    const char *bg = "{\"command\":\"sleep 30\",\"run_in_background\":true,"
                     "\"description\":\"limit\"";
    struct {
        const char *extra, *line;
    } cases[] = {
        {"}", "\nTime limit: 600 s from its start.\n"},
        {",\"timeout\":400000}", "\nTime limit: 400 s from its start.\n"},
        {",\"timeout\":86400000}", "\nTime limit: 86400 s from its start.\n"},
        {",\"timeout\":2500}", "\nTime limit: 2500 ms from its start.\n"},
        {",\"disable_timeout\":true}", "\nTime limit: none (stop it with TaskStop).\n"},
    };
    char args[256];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(args, sizeof args, "%s%s", bg, cases[i].extra);
        agt_result *r = call(s, "Bash", args);
        T_CHECK(contains(agt_result_text(r), cases[i].line) && !agt_result_is_error(r),
                "background %s: %s", cases[i].extra, flat(agt_result_text(r)));
        agt_result_free(r);
    }
    /* a day is the most; the schema says so */
    snprintf(args, sizeof args, "%s,\"timeout\":86400001}", bg);
    agt_result *r = call(s, "Bash", args);
    T_CHECK(contains(agt_result_text(r), "/timeout: must be at most 86400000") &&
                agt_result_is_error(r),
            "background timeout over a day: %s", flat(agt_result_text(r)));
    agt_result_free(r);
    agt_session_free(s);
}

static void test_many(void)
{
    int before = count_fds();
    agt_session *s = new_session(200, 0);
    int started = 0;
    for (int i = 0; i < 120; i++) {
        char *id = start_bg(s, i % 2 ? "true" : "echo $$", NULL);
        started += id != NULL;
        free(id);
    }
    T_EQ_INT(started, 120, "120 background tasks started");
    size_t events = 0;
    for (int i = 0; i < 3000 && events < 120; i++) {
        json_t *ev = tick(s);
        events += json_array_size(ev);
        json_decref(ev);
        if (events < 120)
            usleep(5000);
    }
    T_EQ_INT(events, 120, "120 finished events");
    agt_result *r = call(s, "TaskList", "{}");
    T_EQ_STR(agt_result_text(r), "No running background tasks.", "all reaped");
    agt_result_free(r);
    agt_session_free(s);
    T_EQ_INT(count_fds(), before, "no descriptor left");
    errno = 0;
    pid_t z = waitpid(-1, NULL, WNOHANG);
    T_CHECK(z == -1 && errno == ECHILD, "no child (zombie or alive) left");
}

/* agt_session_set_tool_output_callback: a host that watches and interrupts. */
typedef struct watch {
    char out[4096];
    size_t len;
    int pieces, beats;
    int beats_with_len; /* heartbeats that carried a length (none should) */
    char call_id[32], tool[16];
    const char *go_file;  /* created when "one\n" was seen */
    const char *stop_on;  /* interrupt once the output holds this */
    int stop_after_beats; /* interrupt at this heartbeat (0: never) */
    int calls_after_stop;
    int stopped;
} watch;

static int on_output(const char *call_id, const char *tool, const char *data, size_t len,
                     void *payload)
{
    watch *w = payload;
    if (w->stopped)
        w->calls_after_stop++;
    snprintf(w->call_id, sizeof w->call_id, "%s", call_id);
    snprintf(w->tool, sizeof w->tool, "%s", tool);
    if (data == NULL) {
        w->beats++;
        /* counted here and checked once after the call: a check per beat
         * made the plan's length depend on how many fired */
        w->beats_with_len += len != 0;
    } else {
        w->pieces++;
        if (w->len + len < sizeof w->out) {
            memcpy(w->out + w->len, data, len);
            w->len += len;
            w->out[w->len] = '\0';
        }
        if (w->go_file != NULL && strstr(w->out, "one\n") != NULL) {
            FILE *f = fopen(w->go_file, "w");
            if (f != NULL)
                fclose(f);
            w->go_file = NULL;
        }
    }
    if ((w->stop_on != NULL && strstr(w->out, w->stop_on) != NULL) ||
        (w->stop_after_beats > 0 && w->beats >= w->stop_after_beats)) {
        w->stopped = 1;
        return 1;
    }
    return 0;
}

static agt_result *call_id(agt_session *s, const char *id, const char *args)
{
    agt_result *r = NULL;
    int rc = agt_session_dispatch(s, id, "Bash", args, &r);
    if (rc != AGT_OK || r == NULL) {
        printf("Bail out! dispatch Bash %s: %d %s\n", args, rc, agt_error_message());
        exit(1);
    }
    return r;
}

static const char interrupted[] =
    "Command was interrupted by the user: its process group was sent SIGTERM (SIGKILL after the "
    "grace period if it had not ended). Do not run it again unless the user asks.";

static void test_live_output(int bg_on_timeout)
{
    const char *how = bg_on_timeout ? "through the task manager" : "foreground";
    agt_session *s = new_session(0, bg_on_timeout);
    T_EQ_INT(agt_session_set_tool_output_callback(NULL, on_output, NULL), AGT_EINVAL,
             "NULL session refused");
    watch w;
    memset(&w, 0, sizeof w);
    char go[300];
    snprintf(go, sizeof go, "%s/go-%d", ws, bg_on_timeout);
    w.go_file = go;
    T_EQ_INT(agt_session_set_tool_output_callback(s, on_output, &w), AGT_OK, "callback set");
    /* the command waits for a file the host creates when it sees "one": it
     * ends only when the output streams while it runs (else at the 20 s
     * timeout, and the text differs) */
    char args[512];
    snprintf(args, sizeof args,
             "{\"command\":\"echo one; while [ ! -e '%s' ]; do sleep 0.05; done; echo two\","
             "\"timeout\":20000}",
             go);
    agt_result *r = call_id(s, "live-1", args);
    T_EQ_STR(agt_result_text(r), "one\ntwo\nCommand completed with exit code 0.",
             "%s: the command saw the host react to its first line", how);
    T_EQ_STR(w.out, "one\ntwo\n", "%s: the host got the whole output", how);
    T_EQ_STR(w.call_id, "live-1", "%s: the call's id", how);
    T_EQ_STR(w.tool, "Bash", "%s: the tool", how);
    T_EQ_INT(w.beats_with_len, 0, "%s: no heartbeat carried a length", how);
    agt_result_free(r);

    /* interrupted on its output: sleep gets SIGTERM */
    memset(&w, 0, sizeof w);
    w.stop_on = "started\n";
    r = call_id(s, "live-2", "{\"command\":\"echo started; sleep 30; echo never\"}");
    char want[512];
    snprintf(want, sizeof want, "started\n%s", interrupted);
    T_EQ_STR(agt_result_text(r), want, "%s: interrupted on its output", how);
    T_EQ_INT(agt_result_is_error(r), 1, "%s: an interrupted call is an error result", how);
    char *st = json_field(r, "status");
    T_EQ_STR(st, "interrupted", "%s: status interrupted", how);
    free(st);
    T_EQ_INT(w.calls_after_stop, 0, "%s: no call after the interrupt", how);
    T_EQ_INT(w.beats_with_len, 0, "%s: no heartbeat carried a length (interrupted)", how);
    agt_result_free(r);

    /* interrupted at a heartbeat; TERM is ignored, so KILL after the grace period */
    memset(&w, 0, sizeof w);
    w.stop_after_beats = 3;
    r = call_id(s, "live-3", "{\"command\":\"trap '' TERM; sleep 30\"}");
    snprintf(want, sizeof want, "(no output)\n%s", interrupted);
    T_EQ_STR(agt_result_text(r), want, "%s: interrupted at the third heartbeat", how);
    T_EQ_INT(w.beats, 3, "%s: heartbeats while it ran without output", how);
    T_EQ_INT(w.beats_with_len, 0, "%s: a heartbeat has no length", how);
    T_EQ_INT(w.calls_after_stop, 0, "%s: no heartbeat after the interrupt", how);
    agt_result_free(r);

    /* removed: the command runs as before */
    memset(&w, 0, sizeof w);
    T_EQ_INT(agt_session_set_tool_output_callback(s, NULL, NULL), AGT_OK, "callback removed");
    text_is(s, "{\"command\":\"echo quiet\"}", "quiet\nCommand completed with exit code 0.", 0,
            bg_on_timeout ? "movable, no callback" : "foreground, no callback");
    T_EQ_INT(w.pieces + w.beats, 0, "%s: a removed callback is not called", how);
    agt_session_free(s);
}

int main(void)
{
    const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(ws, sizeof ws, "%s/agt-test-bash-XXXXXX", tmp);
    if (mkdtemp(ws) == NULL || agt_registry_new(&reg) != AGT_OK ||
        agt_registry_load_builtin(reg, "chat") != AGT_OK) {
        printf("Bail out! setup\n");
        return 1;
    }
    snprintf(logs, sizeof logs, "%s/.logs", ws);
    test_foreground();
    test_timeout_units();
    test_fg_logs();
    test_kill_and_caps();
    test_background();
    test_limit_and_poll();
    test_move_to_background();
    test_live_output(0);
    test_live_output(1);
    test_save_restore();
    test_many();
    agt_registry_free(reg);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", ws);
    if (system(cmd) != 0)
        t_diag("cleanup of %s failed", ws);
    return t_done();
}
