/*
 * Bash: runs a command in the foreground (waits, up to its timeout) or as a
 * background task of the session (returns its task id at once). The process
 * engine (lib/proc) does the spawning, capture and killing; this file turns
 * the arguments into engine options and the outcome into text.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/core.h"
#include "dispatch/dispatch_internal.h"
#include "fs/fs.h"
#include "proc/proc.h"
#include "sandbox/sandbox.h"
#include "session/events_internal.h"
#include "session/sandbox_settings.h"
#include "session/session_internal.h"
#include "tools_internal.h"

/* Bash's timeout argument is in milliseconds, as in the reference agents:
 * 60 s by default in the foreground and at most 5 minutes there; 10 minutes
 * by default in the background, where an explicit one may go up to a day
 * (the schema's maximum). */
#define FG_TIMEOUT_DEFAULT_MS 60000
#define FG_TIMEOUT_MAX_MS 300000
#define BG_TIMEOUT_DEFAULT_MS 600000
/* MAX_ARG_STRLEN on Linux: the longest exec argument, its NUL included */
#define BASH_MAX_COMMAND 131072u
/* Bytes of the log shown when a foreground command ran through the task
 * manager (background-on-timeout) and ended in time. */
#define FG_TAIL_BYTES 30000

static const char *shell_path(void)
{
    return access("/bin/bash", X_OK) == 0 ? "/bin/bash" : "/bin/sh";
}

static bool blank(const char *s)
{
    for (; *s; s++)
        if (*s != ' ' && *s != '\t' && *s != '\n' && *s != '\r')
            return false;
    return true;
}

/* The working directory: inside the workspace, an existing directory. */
static int resolve_cwd(agt_call *call, agt_session *s, const char *arg, char **out)
{
    *out = NULL;
    if (arg == NULL) {
        *out = agti_strdup(s->root);
        return *out ? AGT_OK : agti_oom();
    }
    char *abs = NULL;
    int rc = agti_path_resolve(s->root, NULL, 0, NULL, arg, &abs, NULL);
    if (rc == AGT_ENOMEM)
        return rc;
    if (rc != AGT_OK) {
        agti_tool_fail(call, AGT_OK,
                       "cwd '%s' is refused: %s. Commands run inside the workspace %s.", arg,
                       agt_error_message(), s->root);
        return AGT_EDENIED;
    }
    struct stat st;
    if (stat(abs, &st) != 0 || !S_ISDIR(st.st_mode)) {
        agti_tool_fail(call, AGT_OK, "cwd '%s' is not an existing directory inside the workspace.",
                       arg);
        free(abs);
        return AGT_ENOTFOUND;
    }
    *out = abs;
    return AGT_OK;
}

/* A time limit as the model gave it: whole seconds as "N s", else "N ms". */
static void put_limit(agti_buf *b, int64_t ms)
{
    if (ms % 1000 == 0)
        agti_buf_printf(b, "%lld s", (long long)(ms / 1000));
    else
        agti_buf_printf(b, "%lld ms", (long long)ms);
}

static void put_outcome(agti_buf *b, agti_proc_state st, int code, int sig, const char *reason,
                        int64_t timeout_ms)
{
    switch (st) {
    case AGTI_PROC_COMPLETED:
        agti_buf_puts(b, "Command completed with exit code 0.");
        break;
    case AGTI_PROC_FAILED:
        if (code >= 0) {
            agti_buf_printf(b, "Command failed with exit code %d", code);
            if (code == 127)
                agti_buf_puts(b, " (command not found)");
            else if (code == 126)
                agti_buf_puts(b, " (command not executable)");
            agti_buf_putc(b, '.');
        } else if (sig > 0) {
            agti_buf_printf(b, "Command was killed by signal %d (%s).", sig, strsignal(sig));
        } else {
            agti_buf_printf(b, "Command failed: %s.", reason ? reason : "exit status unavailable");
        }
        break;
    case AGTI_PROC_TIMED_OUT:
        agti_buf_puts(b, "Command timed out after ");
        put_limit(b, timeout_ms);
        agti_buf_puts(b, ": its process group was sent SIGTERM, then SIGKILL after the grace "
                         "period. Use a longer timeout, or run_in_background for long commands.");
        break;
    case AGTI_PROC_KILLED:
        agti_buf_printf(b, "Command was stopped: %s.", reason ? reason : "killed");
        break;
    case AGTI_PROC_RUNNING:
        agti_buf_puts(b, "Command is still running.");
        break;
    }
}

/* The sandbox of one call: prepared before the spawn, freed after it. */
typedef struct bash_sb {
    agti_sandbox *sb; /* NULL: runs unsandboxed */
    char *tmp_env;    /* "TMPDIR=..." */
    const char *env[2];
    bool disabled; /* dangerously_disable_sandbox (approved by the gate) */
} bash_sb;

static void sb_opts(bash_sb *b, agti_proc_opts *o)
{
    o->sandbox = b->sb;
    if (b->tmp_env) {
        b->env[0] = b->tmp_env;
        b->env[1] = NULL;
        o->env = b->env;
    }
}

/* Output lines that carry the kernel's refusal. */
static const char *const refusals[] = {"Permission denied", "Operation not permitted",
                                       "Read-only file system"};

/* The path named on the first refusal line: 'quoted' or the text before
 * ": <refusal>" (last word). Malloc'd, NULL when none is found. */
static char *refused_path(const char *line, size_t n, const char *at)
{
    const char *q = memchr(line, '\'', n);
    const char *q2 = q ? memchr(q + 1, '\'', (size_t)(line + n - q - 1)) : NULL;
    if (q && q2 && q2 < at)
        return agti_strndup(q + 1, (size_t)(q2 - q - 1));
    const char *end = at;
    while (end > line && (end[-1] == ' ' || end[-1] == ':'))
        end--;
    const char *start = end;
    while (start > line && start[-1] != ' ' && start[-1] != ':')
        start--;
    if (end > start &&
        (start[0] == '/' || start[0] == '.' || memchr(start, '/', (size_t)(end - start))))
        return agti_strndup(start, (size_t)(end - start));
    return NULL;
}

/* A failed sandboxed command whose output shows the kernel refusing
 * something: says so, names what it tried where the output tells, and how
 * the user can allow it. */
static void sandbox_note(agti_buf *b, agt_session *s, const bash_sb *sb, const char *out,
                         size_t len)
{
    if (sb->sb == NULL || out == NULL)
        return;
    const char *hit = NULL, *line = out;
    size_t line_len = 0;
    for (const char *p = out; p < out + len && hit == NULL;) {
        const char *nl = memchr(p, '\n', (size_t)(out + len - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(out + len - p);
        for (size_t i = 0; i < sizeof refusals / sizeof refusals[0] && hit == NULL; i++) {
            const char *f = memmem(p, n, refusals[i], strlen(refusals[i]));
            if (f) {
                hit = f;
                line = p;
                line_len = n;
            }
        }
        p = nl ? nl + 1 : out + len;
    }
    if (hit == NULL)
        return;
    agti_sandbox_enforced e;
    agti_sandbox_get_enforced(sb->sb, &e);
    bool net_word = false;
    static const char *const net_words[] = {"socket",  "connect", "/dev/tcp/", "/dev/udp/",
                                            "Network", "network", "resolve",   "http"};
    for (size_t i = 0; i < sizeof net_words / sizeof net_words[0]; i++)
        net_word = net_word || memmem(line, line_len, net_words[i], strlen(net_words[i])) != NULL;
    agti_buf_puts(b, "\nThe sandbox may have refused this command (");
    agti_buf_puts(b, agt_sandbox_mode_name(e.mode));
    agti_buf_puts(b, e.network ? ", network on)" : ", network off)");
    char *path = refused_path(line, line_len, hit);
    if (!e.network && net_word)
        agti_buf_puts(b, ": it tried to use the network, which is off in the sandbox");
    else if (path)
        agti_buf_printf(b,
                        ": it tried to write '%s', outside the writable roots (the workspace "
                        "%s, the session's tmp folder $TMPDIR, and folders the user added) or "
                        "a protected path (a repository's .git folder: git commands that write it, "
                        "such as add, commit or checkout, need a run outside the sandbox; "
                        ".agenttools)",
                        path, s->root);
    else
        agti_buf_puts(b, ": writes outside the writable roots, protected paths and (with the "
                         "network off) sockets other than AF_UNIX are refused");
    free(path);
    agti_buf_puts(b, ". Do not work around it. If the user agrees, they can allow it: add the "
                     "folder as a writable root, turn the network on, or approve a rerun with "
                     "dangerously_disable_sandbox: true, which always asks them.");
}

/* The host's live view of a foreground command (agt_session_set_tool_output_callback). */
typedef struct live {
    agt_tool_output_fn fn; /* NULL: no host callback */
    void *payload;
    const char *call_id;
    bool got_output; /* output came since the last heartbeat */
    bool interrupt;  /* the host asked to interrupt */
} live;

#define LIVE_TICK_MS 100

static void live_init(live *l, agt_call *call, agt_session *s)
{
    memset(l, 0, sizeof *l);
    struct agti_session_bg *bg = agti_session_bg(s);
    if (bg != NULL) {
        l->fn = bg->output_fn;
        l->payload = bg->output_payload;
    }
    l->call_id = agt_call_id(call);
}

static void live_output(const char *data, size_t len, void *ctx)
{
    live *l = ctx;
    l->got_output = true;
    if (l->fn != NULL && !l->interrupt && l->fn(l->call_id, "Bash", data, len, l->payload) != 0)
        l->interrupt = true;
}

/* After one pump: a heartbeat when nothing came. Whether to interrupt now. */
static bool live_tick(live *l)
{
    if (l->fn == NULL)
        return false;
    if (!l->interrupt && !l->got_output && l->fn(l->call_id, "Bash", NULL, 0, l->payload) != 0)
        l->interrupt = true;
    l->got_output = false;
    return l->interrupt;
}

static const char interrupted_text[] =
    "Command was interrupted by the user: its process group was sent SIGTERM (SIGKILL after the "
    "grace period if it had not ended). Do not run it again unless the user asks.";

static int run_foreground(agt_call *call, agt_session *s, const char *command, const char *cwd,
                          int64_t timeout_ms, bash_sb *sbx)
{
    const char *dir;
    int rc = agti_session_log_dir(s, &dir);
    if (rc != AGT_OK)
        return rc;
    uint32_t r;
    if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r)
        r = (uint32_t)agti_proc_monotonic_ms(NULL) ^ (uint32_t)getpid();
    char *log = agti_aprintf("%s/fg-%08x.log", dir, (unsigned)r);
    if (log == NULL)
        return agti_oom();
    agti_proc_opts o;
    agti_proc_opts_init(&o);
    o.shell = shell_path();
    o.cwd = cwd;
    o.log_path = log;
    o.timeout_ms = timeout_ms;
    sb_opts(sbx, &o);
    live lv;
    live_init(&lv, call, s);
    if (lv.fn != NULL) {
        o.on_output = live_output;
        o.output_ctx = &lv;
    }
    agti_proc *p = NULL;
    rc = agti_proc_spawn(&p, command, &o);
    if (rc != AGT_OK) {
        free(log);
        return rc;
    }
    bool interrupted = false;
    while (!agti_proc_done(p)) {
        if (agti_proc_pump(p, lv.fn != NULL ? LIVE_TICK_MS : -1) != AGT_OK)
            break; /* killed and reaped: the outcome says so */
        if (live_tick(&lv)) {
            interrupted = agti_proc_stop(p, "interrupted by the user") == AGT_OK;
            lv.fn = NULL; /* not called again for this call */
        }
    }
    char *out = NULL;
    size_t len = 0;
    rc = agti_proc_output(p, &out, &len);
    if (rc != AGT_OK) {
        agti_proc_free(p);
        free(log);
        return rc;
    }
    agti_proc_state st = agti_proc_state_get(p);
    agti_buf b = AGTI_BUF_INIT;
    if (len == 0) {
        agti_buf_puts(&b, "(no output)\n");
    } else {
        agti_buf_put(&b, out, len);
        if (out[len - 1] != '\n')
            agti_buf_putc(&b, '\n');
    }
    if (interrupted && st == AGTI_PROC_KILLED)
        agti_buf_puts(&b, interrupted_text);
    else
        put_outcome(&b, st, agti_proc_exit_code(p), agti_proc_signal(p), agti_proc_reason(p),
                    timeout_ms);
    if (st == AGTI_PROC_FAILED)
        sandbox_note(&b, s, sbx, out, len);
    interrupted = interrupted && st == AGTI_PROC_KILLED;
    /* The log is only worth keeping when the result points to it: the output
     * was cut and agti_proc_output named the log in its marker. Otherwise the
     * result holds every byte (as UTF-8) and the file would only pile up, one
     * per command, in the session's log folder. The flag decides, not the
     * marker's text: a command may print that text itself. */
    bool keep = agti_proc_output_cut(p);
    if (!keep)
        unlink(log);
    json_t *j = json_pack(
        "{s:s, s:o, s:i, s:I, s:o, s:I, s:b}", "status",
        interrupted ? "interrupted" : agti_proc_state_name(st), "exit_code",
        agti_proc_exit_code(p) >= 0 ? json_integer(agti_proc_exit_code(p)) : json_null(), "signal",
        agti_proc_signal(p), "output_bytes", (json_int_t)agti_proc_output_bytes(p), "output_path",
        keep ? json_string(log) : json_null(), "duration_ms",
        (json_int_t)(agti_proc_ended_ms(p) - agti_proc_started_ms(p)), "sandboxed",
        sbx->sb != NULL);
    free(out);
    agti_proc_free(p);
    free(log);
    return agti_tool_finish(call, &b, j, st != AGTI_PROC_COMPLETED);
}

static int started_text(agt_call *call, agti_tasks *m, const char *id, int64_t limit_ms,
                        const char *lead)
{
    agti_task_info info;
    if (agti_tasks_get(m, id, &info) != AGT_OK)
        return agti_error(AGT_ESTATE, "task %s vanished right after it started", id);
    agti_buf b = AGTI_BUF_INIT;
    agti_buf_printf(&b, "%s task %s (pid %ld): %s\nStatus: %s\nLog: %s\n", lead, id, (long)info.pid,
                    info.description, agti_proc_state_name(info.state), info.log_path);
    if (limit_ms > 0) {
        agti_buf_puts(&b, "Time limit: ");
        put_limit(&b, limit_ms);
        agti_buf_puts(&b, " from its start.\n");
    } else
        agti_buf_puts(&b, "Time limit: none (stop it with TaskStop).\n");
    agti_buf_puts(&b, "You will be notified when it ends; TaskOutput shows its output so far, "
                      "TaskStop ends it.");
    json_t *j = json_pack("{s:s, s:I, s:s, s:s, s:s}", "task_id", id, "pid", (json_int_t)info.pid,
                          "description", info.description, "status",
                          agti_proc_state_name(info.state), "output_path", info.log_path);
    return agti_tool_finish(call, &b, j, false);
}

static int run_background(agt_call *call, agt_session *s, const char *command, const char *cwd,
                          const char *desc, int64_t limit_ms, bash_sb *sbx)
{
    agti_tasks *m;
    int rc = agti_session_tasks(s, &m);
    if (rc != AGT_OK)
        return rc;
    agti_proc_opts o;
    agti_proc_opts_init(&o);
    o.shell = shell_path();
    o.cwd = cwd;
    o.timeout_ms = limit_ms;
    sb_opts(sbx, &o);
    char id[16];
    rc = agti_tasks_start(m, command, desc, &o, id);
    if (rc == AGT_ELIMIT)
        return agti_tool_fail(
            call, AGT_OK,
            "Cannot start another background task: %s. Wait for one to end, or stop "
            "one with TaskStop (TaskList shows them).",
            agt_error_message());
    if (rc != AGT_OK)
        return rc;
    return started_text(call, m, id, limit_ms, "Started background");
}

/* Hands the bytes of a task's log from *off up to `upto` to the host. */
static void live_log(live *l, const char *path, uint64_t *off, uint64_t upto)
{
    if (l->fn == NULL || upto <= *off)
        return;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    char buf[65536];
    while (*off < upto && l->fn != NULL && !l->interrupt) {
        size_t want = upto - *off < sizeof buf ? (size_t)(upto - *off) : sizeof buf;
        ssize_t n = pread(fd, buf, want, (off_t)*off);
        if (n <= 0)
            break;
        live_output(buf, (size_t)n, l);
        *off += (uint64_t)n;
    }
    close(fd);
}

/* agti_tasks_wait with the host's live view: the log's new bytes and a
 * heartbeat every tick; an interrupt stops the task (TERM, grace, KILL) and
 * waits for its end. *interrupted tells whether the host interrupted it. */
static int wait_live(agti_tasks *m, const char *id, int64_t timeout_ms, live *l, bool *interrupted)
{
    *interrupted = false;
    if (l->fn == NULL)
        return agti_tasks_wait(m, id, timeout_ms);
    int64_t until = agti_proc_monotonic_ms(NULL) + timeout_ms;
    uint64_t off = 0;
    for (;;) {
        int64_t left = until - agti_proc_monotonic_ms(NULL);
        int rc =
            agti_tasks_wait(m, id, left <= 0 ? 0 : (left < LIVE_TICK_MS ? left : LIVE_TICK_MS));
        agti_task_info info;
        if (agti_tasks_get(m, id, &info) == AGT_OK)
            live_log(l, info.log_path, &off, info.output_bytes);
        if (rc != AGT_ETIMEOUT || left <= 0)
            return rc;
        if (live_tick(l)) {
            *interrupted = agti_tasks_stop(m, id, "interrupted by the user") == AGT_OK;
            l->fn = NULL;
            return agti_tasks_wait(m, id, -1);
        }
    }
}

/* Foreground run through the task manager, so that a command still running
 * at its timeout can stay alive as a background task. */
static int run_movable(agt_call *call, agt_session *s, const char *command, const char *cwd,
                       int64_t timeout_ms, bool *fallback, bash_sb *sbx)
{
    *fallback = false;
    agti_tasks *m;
    int rc = agti_session_tasks(s, &m);
    if (rc != AGT_OK)
        return rc;
    agti_proc_opts o;
    agti_proc_opts_init(&o);
    o.shell = shell_path();
    o.cwd = cwd;
    o.timeout_ms = BG_TIMEOUT_DEFAULT_MS;
    sb_opts(sbx, &o);
    char id[16];
    rc = agti_tasks_start(m, command, command, &o, id);
    if (rc == AGT_ELIMIT) {
        *fallback = true;
        return AGT_OK;
    }
    if (rc != AGT_OK)
        return rc;
    live lv;
    live_init(&lv, call, s);
    bool interrupted = false;
    rc = wait_live(m, id, timeout_ms, &lv, &interrupted);
    if (rc == AGT_ETIMEOUT)
        return started_text(call, m, id, BG_TIMEOUT_DEFAULT_MS,
                            "The command is still running at its timeout; it moved to the "
                            "background as");
    if (rc != AGT_OK)
        return rc;
    struct agti_session_bg *bg = agti_session_bg(s);
    if (bg == NULL || json_object_set_new(bg->quiet, id, json_true()) != 0)
        return agti_oom();
    agti_task_info info;
    if ((rc = agti_tasks_get(m, id, &info)) != AGT_OK)
        return rc;
    char *tail = NULL;
    size_t len = 0;
    if ((rc = agti_tasks_tail(m, id, FG_TAIL_BYTES, &tail, &len)) != AGT_OK)
        return rc;
    agti_buf b = AGTI_BUF_INIT;
    if (info.output_bytes > len)
        agti_buf_printf(&b, "[... first %llu bytes cut; full output in %s ...]\n",
                        (unsigned long long)(info.output_bytes - len), info.log_path);
    if (len == 0)
        agti_buf_puts(&b, "(no output)\n");
    agti_buf_put(&b, tail, len);
    if (len > 0 && tail[len - 1] != '\n')
        agti_buf_putc(&b, '\n');
    interrupted = interrupted && info.state == AGTI_PROC_KILLED;
    if (interrupted)
        agti_buf_puts(&b, interrupted_text);
    else
        put_outcome(&b, info.state, info.exit_code, info.signal, info.reason, timeout_ms);
    if (info.state == AGTI_PROC_FAILED)
        sandbox_note(&b, s, sbx, tail, len);
    free(tail);
    json_t *j =
        json_pack("{s:s, s:o, s:i, s:I, s:s, s:I}", "status",
                  interrupted ? "interrupted" : agti_proc_state_name(info.state), "exit_code",
                  info.exit_code >= 0 ? json_integer(info.exit_code) : json_null(), "signal",
                  info.signal, "output_bytes", (json_int_t)info.output_bytes, "output_path",
                  info.log_path, "duration_ms", (json_int_t)(info.ended_ms - info.started_ms));
    return agti_tool_finish(call, &b, j, info.state != AGTI_PROC_COMPLETED);
}

int agti_tool_bash(agt_call *call, void *payload)
{
    (void)payload;
    agt_session *s = agt_call_session(call);
    json_t *a = agti_call_args_json(call);
    const char *command = json_string_value(json_object_get(a, "command"));
    const char *cwd_arg = json_string_value(json_object_get(a, "cwd"));
    const char *desc = json_string_value(json_object_get(a, "description"));
    json_t *tv = json_object_get(a, "timeout");
    bool background = json_is_true(json_object_get(a, "run_in_background"));
    bool no_limit = json_is_true(json_object_get(a, "disable_timeout"));
    if (command == NULL || blank(command))
        return agti_tool_fail(call, AGT_OK, "The command is blank; give the command line to run.");
    /* Linux refuses a single exec argument over MAX_ARG_STRLEN (32 pages) */
    size_t clen = json_string_length(json_object_get(a, "command"));
    if (clen >= BASH_MAX_COMMAND)
        return agti_tool_fail(call, AGT_OK,
                              "The command is %zu bytes long; a command line can have at most %u. "
                              "Write the script to a file with Write and run that file.",
                              clen, BASH_MAX_COMMAND - 1);
    if (background && (desc == NULL || blank(desc)))
        return agti_tool_fail(call, AGT_OK,
                              "A background command needs a description: a few words saying what "
                              "it does, shown in TaskList.");
    int64_t t = json_is_integer(tv) ? (int64_t)json_integer_value(tv) : 0;
    if (!background && t > FG_TIMEOUT_MAX_MS)
        return agti_tool_fail(call, AGT_OK,
                              "timeout %lld ms is over the foreground maximum of %d ms (5 "
                              "minutes); the timeout is in milliseconds. For a longer command "
                              "use run_in_background true (up to 86400000 ms, a day).",
                              (long long)t, FG_TIMEOUT_MAX_MS);
    char *cwd = NULL;
    int rc = resolve_cwd(call, s, cwd_arg, &cwd);
    if (rc != AGT_OK)
        return rc;
    /* The gate asked the user before a call with dangerously_disable_sandbox
     * got here (sandbox_settings.c); every other call runs sandboxed. */
    bash_sb sbx = {0};
    sbx.disabled = json_is_true(json_object_get(a, "dangerously_disable_sandbox"));
    rc = agti_session_command_sandbox(s, sbx.disabled, &sbx.sb, &sbx.tmp_env);
    if (rc == AGT_EUNSUPPORTED) {
        free(cwd);
        return agti_tool_fail(call, AGT_OK,
                              "The command was not run: %s. The session requires the sandbox; "
                              "the user can choose best-effort or turn the sandbox off.",
                              agt_error_message());
    }
    if (rc != AGT_OK) {
        free(cwd);
        return rc;
    }
    if (background) {
        rc = run_background(call, s, command, cwd, desc,
                            no_limit ? 0 : (t > 0 ? t : BG_TIMEOUT_DEFAULT_MS), &sbx);
    } else {
        int64_t limit = t > 0 ? t : FG_TIMEOUT_DEFAULT_MS;
        bool fallback = true;
        struct agti_session_bg *bg = agti_session_bg(s);
        if (bg == NULL)
            rc = AGT_ENOMEM;
        else if (bg->background_on_timeout)
            rc = run_movable(call, s, command, cwd, limit, &fallback, &sbx);
        if (rc == AGT_OK && fallback)
            rc = run_foreground(call, s, command, cwd, limit, &sbx);
    }
    agti_sandbox_free(sbx.sb);
    free(sbx.tmp_env);
    free(cwd);
    return rc;
}
