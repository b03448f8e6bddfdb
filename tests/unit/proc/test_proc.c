/*
 * Process engine: exit codes, merged output, closed stdin and descriptors,
 * environment, cwd, timeouts (TERM ignored, grandchildren, closed output),
 * output caps, UTF-8 repair, injected clock, host event loop, SIGCHLD left
 * alone. Expected values come from the POSIX shell's documented behaviour
 * and from running the same commands in dash/coreutils by hand.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "proc/proc.h"
#include "proc/proc_capture.h"

static char tmpdir[PATH_MAX];

static char *run(const char *cmd, const agti_proc_opts *o, agti_proc **pp)
{
    agti_proc *p = NULL;
    int rc = agti_proc_run_to_completion(&p, cmd, o);
    if (rc != AGT_OK) {
        t_diag("run '%s' failed: %s", cmd, agt_error_message());
        agti_proc_free(p);
        if (pp)
            *pp = NULL;
        return NULL;
    }
    char *out = NULL;
    agti_proc_output(p, &out, NULL);
    if (pp)
        *pp = p;
    else
        agti_proc_free(p);
    return out;
}

static void test_exit_codes(bool no_pidfd)
{
    const char *tag = no_pidfd ? " (waitid fallback)" : "";
    agti_proc_opts o;
    agti_proc_opts_init(&o);
    o.no_pidfd = no_pidfd;
    agti_proc *p;
    char *out = run("exit 0", &o, &p);
    T_EQ_INT(agti_proc_state_get(p), AGTI_PROC_COMPLETED, "exit 0 is completed%s", tag);
    T_EQ_INT(agti_proc_exit_code(p), 0, "exit code 0%s", tag);
    T_EQ_STR(out, "", "no output%s", tag);
    free(out);
    agti_proc_free(p);

    out = run("exit 1", &o, &p);
    T_EQ_INT(agti_proc_state_get(p), AGTI_PROC_FAILED, "exit 1 is failed%s", tag);
    T_EQ_INT(agti_proc_exit_code(p), 1, "exit code 1%s", tag);
    T_EQ_INT(agti_proc_signal(p), 0, "no signal%s", tag);
    T_CHECK(agti_proc_reason(p) == NULL, "no reason for a plain failure%s", tag);
    free(out);
    agti_proc_free(p);

    out = run("agt_no_such_command_xyz", &o, &p);
    T_EQ_INT(agti_proc_exit_code(p), 127, "command not found is 127%s", tag);
    T_CHECK(out && strstr(out, "agt_no_such_command_xyz") && strstr(out, "not found"),
            "sh's not-found message is captured%s", tag);
    free(out);
    agti_proc_free(p);

    out = run("kill -USR1 $$", &o, &p);
    T_EQ_INT(agti_proc_state_get(p), AGTI_PROC_FAILED, "killed by its own signal is failed%s", tag);
    T_EQ_INT(agti_proc_signal(p), SIGUSR1, "signal number reported%s", tag);
    T_EQ_INT(agti_proc_exit_code(p), -1, "no exit code when signalled%s", tag);
    free(out);
    agti_proc_free(p);
}

static void test_io(void)
{
    char *out = run("echo a; echo b >&2; echo c", NULL, NULL);
    T_EQ_STR(out, "a\nb\nc\n", "stdout and stderr merged in order");
    free(out);

    agti_proc *p;
    out = run("cat", NULL, &p);
    T_EQ_STR(out, "", "cat reads an empty stdin");
    T_EQ_INT(agti_proc_exit_code(p), 0, "cat exits 0");
    free(out);
    agti_proc_free(p);

    out = run("readlink /proc/$$/fd/0", NULL, NULL);
    T_EQ_STR(out, "/dev/null\n", "stdin is /dev/null");
    free(out);

    /* A host descriptor without O_CLOEXEC must not reach the child. dash's
     * glob opens the directory as fd 3 while expanding. */
    int fd = open("/dev/null", O_RDONLY);
    int high = dup2(fd, 57);
    close(fd);
    out = run("cd /proc/$$/fd && echo *", NULL, NULL);
    T_EQ_STR(out, "0 1 2 3\n", "only stdin/stdout/stderr are inherited");
    free(out);
    close(high);

    setenv("AGT_HOST_VAR", "kept", 1);
    agti_proc_opts o;
    agti_proc_opts_init(&o);
    const char *env[] = {"AGT_EXTRA=42", "PAGER=less", NULL};
    o.env = env;
    out =
        run("echo $TERM $NO_COLOR $GIT_TERMINAL_PROMPT $PAGER $AGT_EXTRA $AGT_HOST_VAR", &o, NULL);
    T_EQ_STR(out, "dumb 1 0 less 42 kept\n", "defaults, caller extras (override) and host env");
    free(out);
    out = run("echo $TERM $NO_COLOR $PAGER", NULL, NULL);
    T_EQ_STR(out, "dumb 1 cat\n", "TERM NO_COLOR PAGER defaults");
    free(out);

    agti_proc_opts_init(&o);
    o.cwd = tmpdir;
    out = run("pwd", &o, NULL);
    char want[PATH_MAX + 2];
    snprintf(want, sizeof want, "%s\n", tmpdir);
    T_EQ_STR(out, want, "cwd honoured");
    free(out);
}

static void test_spawn_errors(void)
{
    agti_proc *p = (agti_proc *)1;
    T_EQ_INT(agti_proc_spawn(&p, NULL, NULL), AGT_EINVAL, "NULL command");
    T_CHECK(p == NULL, "out cleared on error");
    T_EQ_INT(agti_proc_spawn(&p, "", NULL), AGT_EINVAL, "empty command");
    agti_proc_opts o;
    agti_proc_opts_init(&o);
    o.cwd = "/nonexistent/agt-dir";
    T_EQ_INT(agti_proc_spawn(&p, "true", &o), AGT_ENOTFOUND, "missing cwd");
    T_CHECK(strstr(agt_error_message(), "/nonexistent/agt-dir") != NULL, "message names the cwd");
    o.cwd = "/etc/passwd";
    T_EQ_INT(agti_proc_spawn(&p, "true", &o), AGT_EINVAL, "cwd that is a file");
    agti_proc_opts_init(&o);
    const char *bad_env[] = {"NOEQUALS", NULL};
    o.env = bad_env;
    T_EQ_INT(agti_proc_spawn(&p, "true", &o), AGT_EINVAL, "env entry without '='");
    T_CHECK(strstr(agt_error_message(), "NOEQUALS") != NULL, "message names the entry");
    agti_proc_opts_init(&o);
    o.shell = "/nonexistent/agt-sh";
    T_EQ_INT(agti_proc_spawn(&p, "true", &o), AGT_EIO, "missing shell");
    T_CHECK(strstr(agt_error_message(), "/nonexistent/agt-sh") != NULL, "message names the shell");
    agti_proc_opts_init(&o);
    o.grace_ms = 400LL * 24 * 3600 * 1000;
    T_EQ_INT(agti_proc_spawn(&p, "true", &o), AGT_EINVAL, "grace period over a year");
    o.grace_ms = -2;
    T_EQ_INT(agti_proc_spawn(&p, "true", &o), AGT_EINVAL, "negative grace period");
    agti_proc_opts_init(&o);
    o.log_path = "/nonexistent/dir/log";
    T_EQ_INT(agti_proc_spawn(&p, "true", &o), AGT_EIO, "log in a missing directory");
    T_CHECK(strstr(agt_error_message(), "/nonexistent/dir/log") != NULL, "message names the log");
    agti_proc_free(NULL);
}

/* True when pid is gone or a zombie (dead, waiting for its new parent). */
static bool pid_dead(pid_t pid)
{
    for (int i = 0; i < 200; i++) {
        char path[64], buf[256];
        snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
        FILE *f = fopen(path, "r");
        if (f == NULL)
            return true;
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = '\0';
        const char *rp = strrchr(buf, ')');
        if (rp && (rp[2] == 'Z' || rp[2] == 'X'))
            return true;
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return false;
}

static void test_timeouts(bool no_pidfd)
{
    const char *tag = no_pidfd ? " (waitid fallback)" : "";
    agti_proc_opts o;
    agti_proc_opts_init(&o);
    o.no_pidfd = no_pidfd;
    o.timeout_ms = 300;
    o.grace_ms = 200;
    agti_proc *p;
    char *out = run("trap '' TERM; sleep 100", &o, &p);
    T_EQ_INT(agti_proc_state_get(p), AGTI_PROC_TIMED_OUT, "TERM-ignoring command times out%s", tag);
    T_EQ_INT(agti_proc_signal(p), SIGKILL, "it took KILL after the grace%s", tag);
    T_EQ_STR(agti_proc_reason(p), "timed out after 300 ms", "reason states the timeout%s", tag);
    free(out);
    agti_proc_free(p);

    /* The pids printed by the command are the host's only without a PID
     * namespace: these checks run under the process-group containment;
     * test_supervise.c covers the supervisors by scanning /proc. */
    o.supervise = AGTI_PROC_SUPERVISE_GROUP;
    out = run("sh -c 'sleep 100 & echo $!; sleep 100'", &o, &p);
    T_EQ_INT(agti_proc_state_get(p), AGTI_PROC_TIMED_OUT, "grandchild command times out%s", tag);
    long gc = out ? strtol(out, NULL, 10) : 0;
    T_CHECK(gc > 1, "grandchild pid printed%s", tag);
    T_CHECK(gc > 1 && pid_dead((pid_t)gc), "grandchild is dead afterwards%s", tag);
    free(out);
    agti_proc_free(p);

    /* A stopped shell holds TERM pending until it is continued. */
    out = run("kill -STOP $$; sleep 100", &o, &p);
    T_EQ_INT(agti_proc_state_get(p), AGTI_PROC_TIMED_OUT, "a stopped command times out%s", tag);
    T_EQ_INT(agti_proc_signal(p), SIGTERM, "TERM reached it (CONT sent with it)%s", tag);
    free(out);
    agti_proc_free(p);

    out = run("exec >&- 2>&-; sleep 100", &o, &p);
    T_EQ_INT(agti_proc_state_get(p), AGTI_PROC_TIMED_OUT,
             "a command that closed its output still times out%s", tag);
    T_EQ_INT(agti_proc_signal(p), SIGTERM, "it died of TERM%s", tag);
    free(out);
    agti_proc_free(p);

    /* Leftovers of a command that exited normally are killed with it ... */
    agti_proc_opts_init(&o);
    o.no_pidfd = no_pidfd;
    o.supervise = AGTI_PROC_SUPERVISE_GROUP;
    out = run("sleep 100 & echo $!", &o, &p);
    T_EQ_INT(agti_proc_state_get(p), AGTI_PROC_COMPLETED, "shell that left a job completes%s", tag);
    gc = out ? strtol(out, NULL, 10) : 0;
    T_CHECK(gc > 1 && pid_dead((pid_t)gc), "its background job was killed%s", tag);
    free(out);
    agti_proc_free(p);

    /* ... unless the caller keeps the group. */
    o.keep_group = true;
    out = run("sleep 100 & echo $!", &o, &p);
    T_EQ_INT(agti_proc_state_get(p), AGTI_PROC_COMPLETED, "keep_group: completes%s", tag);
    gc = out ? strtol(out, NULL, 10) : 0;
    T_CHECK(gc > 1 && kill((pid_t)gc, 0) == 0, "keep_group: the job survives%s", tag);
    if (gc > 1)
        kill((pid_t)gc, SIGKILL);
    free(out);
    agti_proc_free(p);
}

static void test_stop(void)
{
    agti_proc *p;
    agti_proc_opts o;
    agti_proc_opts_init(&o);
    o.grace_ms = 200;
    T_EQ_INT(agti_proc_spawn(&p, "sleep 100", &o), AGT_OK, "spawn sleep");
    T_EQ_INT(agti_proc_wait(p, 50), AGT_ETIMEOUT, "wait 50 ms: still running");
    T_EQ_INT(agti_proc_stop(p, "user asked"), AGT_OK, "stop");
    T_EQ_INT(agti_proc_wait(p, -1), AGT_OK, "wait after stop");
    T_EQ_INT(agti_proc_state_get(p), AGTI_PROC_KILLED, "state killed");
    T_EQ_STR(agti_proc_reason(p), "stopped: user asked", "reason");
    T_EQ_INT(agti_proc_stop(p, "again"), AGT_ESTATE, "stopping a finished process");
    T_CHECK(agti_proc_ended_ms(p) >= agti_proc_started_ms(p), "end time set");
    agti_proc_free(p);

    /* Freeing a running process kills and reaps it. */
    T_EQ_INT(agti_proc_spawn(&p, "trap '' TERM; sleep 100", &o), AGT_OK, "spawn for free");
    pid_t pid = agti_proc_pid(p);
    agti_proc_free(p);
    T_CHECK(kill(pid, 0) == -1 && errno == ESRCH, "freed process is gone (reaped)");
}

static off_t file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? st.st_size : -1;
}

static char *repeat(const char *s, size_t n)
{
    size_t l = strlen(s);
    char *r = malloc(l * n + 1);
    for (size_t i = 0; i < n; i++)
        memcpy(r + i * l, s, l);
    r[l * n] = '\0';
    return r;
}

static void test_caps(void)
{
    char log[PATH_MAX + 16];
    snprintf(log, sizeof log, "%s/huge.log", tmpdir);
    agti_proc_opts o;
    agti_proc_opts_init(&o);
    o.log_path = log;
    o.hard_cap = 64u * 1024 * 1024;
    agti_proc *p;
    char *out = run("yes | head -c 50000000", &o, &p);
    T_EQ_INT(agti_proc_state_get(p), AGTI_PROC_COMPLETED, "50 MB of output completes");
    T_EQ_INT(agti_proc_output_bytes(p), 50000000, "all bytes seen");
    T_EQ_INT(file_size(log), 50000000, "log has all 50,000,000 bytes");
    T_CHECK(agti_proc_capture_bytes(p) <= 45000,
            "memory held stays at the cap (%zu <= 15000 head + 2x15000 tail)",
            agti_proc_capture_bytes(p));
    /* 30000 chars of "y\n": 7500 lines each side; the rest is cut:
     * 50,000,000 - 30,000 bytes and 25,000,000 - 15,000 lines. */
    char *half = repeat("y\n", 7500);
    char want[200000];
    snprintf(want, sizeof want,
             "%s[... 49970000 bytes (24985000 lines) cut; full output in %s ...]\n%s", half, log,
             half);
    T_EQ_STR(out, want, "head + marker + tail");
    free(half);
    free(out);
    agti_proc_free(p);

    o.hard_cap = 0; /* default 16 MiB */
    out = run("yes", &o, &p);
    T_EQ_INT(agti_proc_state_get(p), AGTI_PROC_KILLED, "endless yes is killed");
    T_EQ_STR(agti_proc_reason(p), "output exceeded the hard cap of 16777216 bytes",
             "reason states the cap");
    T_EQ_INT(agti_proc_output_bytes(p), 16777216, "recorded up to the cap");
    T_EQ_INT(file_size(log), 16777216, "log ends at the cap");
    free(out);
    agti_proc_free(p);
    unlink(log);

    agti_proc_opts_init(&o);
    o.output_cap = 10;
    agti_proc *cp = NULL;
    out = run("printf 0123456789abcdefghij", &o, &cp);
    T_EQ_STR(out, "01234\n[... 10 bytes (0 lines) cut ...]\nfghij", "small cap, no log");
    T_CHECK(agti_proc_output_cut(cp), "cut flag set");
    free(out);
    agti_proc_free(cp);
    out = run("printf 0123456789", &o, &cp);
    T_EQ_STR(out, "0123456789", "exactly the cap: nothing cut");
    T_CHECK(!agti_proc_output_cut(cp), "cut flag clear at exactly the cap");
    free(out);
    agti_proc_free(cp);
    /* The marker's text printed by the command itself is not a cut. */
    o.output_cap = 100;
    out = run("printf '[... 10 bytes (0 lines) cut ...]\\n'", &o, &cp);
    T_EQ_STR(out, "[... 10 bytes (0 lines) cut ...]\n", "marker text printed by the command");
    T_CHECK(!agti_proc_output_cut(cp), "cut flag clear for a printed marker");
    free(out);
    agti_proc_free(cp);
    T_CHECK(!agti_proc_output_cut(NULL), "cut flag of NULL");
    o.output_cap = 10;
    o.output_cap = 4;
    /* Greek letters are 2 bytes each: the cap counts characters. */
    out = run("printf 'αβγδεζ\\n'", &o, NULL);
    T_EQ_STR(out, "αβ\n[... 6 bytes (0 lines) cut ...]\nζ\n", "cap counts characters (γδε cut)");
    free(out);
}

static void test_utf8(void)
{
    char *out = run("printf '\\377abc'", NULL, NULL);
    T_EQ_STR(out,
             "\xEF\xBF\xBD"
             "abc",
             "invalid byte replaced");
    free(out);
    /* The euro sign E2 82 AC split over two writes (and two reads). */
    out = run("printf '\\342\\202'; sleep 0.2; printf '\\254\\n'", NULL, NULL);
    T_EQ_STR(out, "\xE2\x82\xAC\n", "sequence split across reads kept whole");
    free(out);
    /* Truncated at EOF: each byte that starts no valid sequence is replaced. */
    out = run("printf 'a\\342\\202'", NULL, NULL);
    T_EQ_STR(out, "a\xEF\xBF\xBD\xEF\xBF\xBD", "truncated sequence at EOF replaced");
    free(out);
}

/* The capture fed piece by piece, as reads would deliver it. */
static void test_capture_pieces(void)
{
    agti_capture c;
    agti_capture_init(&c, 100);
    agti_capture_feed(&c, "x\xE2\x82", 3);
    T_EQ_INT(agti_capture_held(&c), 1, "an incomplete sequence is held back");
    agti_capture_feed(&c, "\xAC\n", 2);
    /* "h\xC3\xA9" one byte at a time: é must survive being split. */
    const char *word = "h\xC3\xA9\xF0\x9F\x98\x80!";
    for (size_t i = 0; i < strlen(word); i++)
        agti_capture_feed(&c, word + i, 1);
    agti_capture_feed(&c, "\xF0\x9F", 2); /* truncated by the end of the stream */
    agti_capture_finish(&c);
    char *out = NULL;
    size_t len = 0;
    T_EQ_INT(agti_capture_render(&c, NULL, &out, &len), AGT_OK, "render");
    T_EQ_STR(out, "x\xE2\x82\xAC\nh\xC3\xA9\xF0\x9F\x98\x80!\xEF\xBF\xBD\xEF\xBF\xBD",
             "split sequences joined; the truncated one replaced byte by byte");
    T_EQ_INT(len, 19, "1+3+1 + 1+2+4+1 + 3+3 bytes");
    free(out);
    agti_capture_free(&c);

    /* Tail bigger than the limit in one piece, then in small pieces. */
    agti_capture_init(&c, 6);
    agti_capture_feed(&c, "abcdefghijklmnop", 16);
    for (int i = 0; i < 10; i++)
        agti_capture_feed(&c, "q", 1);
    agti_capture_feed(&c, "\n", 1);
    T_EQ_INT(agti_capture_render(&c, "/x.log", &out, NULL), AGT_OK, "render small cap");
    T_EQ_STR(out, "abc\n[... 21 bytes (0 lines) cut; full output in /x.log ...]\nqq\n",
             "27 bytes: abc kept, qq\\n kept, 21 cut");
    free(out);
    agti_capture_free(&c);
}

static int64_t fake_now;
static int64_t fake_clock(void *ctx)
{
    (void)ctx;
    return fake_now;
}

static void test_fake_clock(void)
{
    agti_proc_opts o;
    agti_proc_opts_init(&o);
    o.clock = fake_clock;
    o.timeout_ms = 1000;
    o.grace_ms = 1000;
    fake_now = 5000;
    agti_proc *p;
    T_EQ_INT(agti_proc_spawn(&p, "trap '' TERM; sleep 100", &o), AGT_OK, "spawn (fake clock)");
    T_EQ_INT(agti_proc_started_ms(p), 5000, "start time from the injected clock");
    T_EQ_INT(agti_proc_next_deadline(p), 6000, "deadline = start + timeout");
    agti_proc_pump(p, 50);
    T_EQ_INT(agti_proc_state_get(p), AGTI_PROC_RUNNING, "running before the deadline");
    fake_now = 6000;
    agti_proc_pump(p, 0);
    T_EQ_INT(agti_proc_next_deadline(p), 7000, "after TERM: KILL due at +grace");
    for (int i = 0; i < 3; i++)
        agti_proc_pump(p, 50);
    T_EQ_INT(agti_proc_state_get(p), AGTI_PROC_RUNNING, "TERM ignored: running within the grace");
    fake_now = 7000;
    T_EQ_INT(agti_proc_wait(p, -1), AGT_OK, "wait");
    T_EQ_INT(agti_proc_state_get(p), AGTI_PROC_TIMED_OUT, "timed out on the fake clock");
    T_EQ_INT(agti_proc_signal(p), SIGKILL, "KILLed at the end of the grace");
    T_EQ_INT(agti_proc_ended_ms(p), 7000, "end time from the injected clock");
    T_EQ_STR(agti_proc_reason(p), "timed out after 1000 ms", "reason");
    agti_proc_free(p);
}

/* The host drives the process from its own poll loop. */
static void test_event_loop(void)
{
    agti_proc *p;
    T_EQ_INT(agti_proc_spawn(&p, "echo a; sleep 0.1; echo b", NULL), AGT_OK, "spawn");
    int loops = 0, bad = 0;
    while (!agti_proc_done(p) && loops < 10000) {
        struct pollfd fds[2];
        size_t n = agti_proc_poll_fds(p, fds);
        int64_t dl = agti_proc_next_deadline(p);
        int wait = dl < 0 ? 1000 : (int)(dl - agti_proc_monotonic_ms(NULL));
        poll(fds, (nfds_t)n, wait < 0 ? 0 : wait);
        bad += agti_proc_pump(p, 0) != AGT_OK;
        loops++;
    }
    T_EQ_INT(bad, 0, "every pump succeeded");
    T_CHECK(agti_proc_done(p), "finished through the host's loop");
    T_CHECK(loops < 100, "the loop blocked in poll instead of spinning (%d turns)", loops);
    char *out = NULL;
    agti_proc_output(p, &out, NULL);
    T_EQ_STR(out, "a\nb\n", "output");
    free(out);
    agti_proc_free(p);
}

/* A job left behind that writes without pause must not keep the engine
 * reading forever, even without a hard cap. */
static void test_leftover_writer(void)
{
    agti_proc_opts o;
    agti_proc_opts_init(&o);
    o.hard_cap = SIZE_MAX;
    agti_proc *p;
    char *out = run("yes & echo started", &o, &p);
    T_EQ_INT(agti_proc_state_get(p), AGTI_PROC_COMPLETED, "shell leaving a writer completes");
    T_EQ_INT(agti_proc_exit_code(p), 0, "with the shell's status");
    free(out);
    agti_proc_free(p);
}

/* A host that ignores SIGCHLD has its children reaped by the kernel: the
 * status is lost, which is reported rather than guessed. */
static void test_host_reaps(void)
{
    struct sigaction old, ign;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigemptyset(&ign.sa_mask);
    sigaction(SIGCHLD, &ign, &old);
    agti_proc *p;
    char *out = run("echo hi; exit 3", NULL, &p);
    T_EQ_STR(out, "hi\n", "output kept when the host reaps");
    T_EQ_INT(agti_proc_state_get(p), AGTI_PROC_FAILED, "status unknown counts as failed");
    T_EQ_INT(agti_proc_exit_code(p), -1, "no exit code invented");
    const char *why = agti_proc_reason(p);
    T_CHECK(why && strncmp(why, "exit status unavailable", 23) == 0, "reason says why: %s",
            why ? why : "(null)");
    free(out);
    agti_proc_free(p);
    sigaction(SIGCHLD, &old, NULL);
}

static void chld_handler(int sig)
{
    (void)sig;
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/agt-proc-XXXXXX");
    if (mkdtemp(tmpdir) == NULL)
        return 1;
    char real[PATH_MAX];
    if (realpath(tmpdir, real))
        snprintf(tmpdir, sizeof tmpdir, "%s", real);

    /* A host with its own SIGCHLD handler (that does not reap) and SIGPIPE
     * ignored, like many servers. */
    struct sigaction sa, before, after;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = chld_handler;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGCHLD, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    sigaction(SIGCHLD, NULL, &before);

    test_exit_codes(false);
    test_exit_codes(true);
    test_io();
    test_spawn_errors();
    test_timeouts(false);
    test_timeouts(true);
    test_stop();
    test_caps();
    test_utf8();
    test_capture_pieces();
    test_fake_clock();
    test_event_loop();

    test_leftover_writer();
    test_host_reaps();

    sigaction(SIGCHLD, NULL, &after);
    T_CHECK(after.sa_handler == chld_handler && after.sa_flags == before.sa_flags,
            "the host's SIGCHLD disposition is unchanged");
    errno = 0;
    T_CHECK(waitpid(-1, NULL, WNOHANG) == -1 && errno == ECHILD, "no child left unreaped");
    rmdir(tmpdir);
    return t_done();
}
