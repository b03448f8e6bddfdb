/*
 * agt-chat: an interactive coding agent on the chat tool set. Line editing
 * (libedit), streamed answers, approval prompts with diffs, slash commands,
 * background task notifications, save and resume. `-p PROMPT` answers one
 * prompt and exits (for scripts). Built on the public headers only.
 */
#include "chat.h"

#include "cli_agent.h"
#include "cli_config.h"
#include "cli_sandbox.h"
#include "cli_util.h"

#include <editline/readline.h>
#include <errno.h>
#include <ftw.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t g_cancel;

static void on_sigint(int sig)
{
    (void)sig;
    g_cancel = 1;
}

typedef struct chat {
    chat_ui ui;
    cli_config cfg;
    agt_registry *reg;
    agt_session *session;
    agt_model *model;
    cli_agent agent;
    const char *print_prompt;
    const char *resume;
    const char *root_opt;
    const char *plan_file;
    int plan;
    int max_turns;
    int64_t wait_tasks_s;
    int at_line_start;
    /* the live card of the running call (Bash output, spinner) */
    char card_id[128];
    char card_title[160];
    int64_t card_started_ms;
    int card_spinner; /* the spinner line is on screen (stderr) */
    int card_bol;     /* the card's output is at a line start */
    int card_frame;
    int running;    /* calls started and not finished */
    int group_left; /* cards of the parallel group still to come */
    int md_on;      /* answers rendered as markdown (stdout is a terminal) */
    chat_md_stream md;
    chat_out out; /* -p --output-format */
    /* --allow / --ask / --deny RULE, in order */
    const char *rules[64];
    int rule_kinds[64];
    int nrules;
    int project_rules;  /* the project's settings file had rules */
    char *instructions; /* the instruction files in the system prompt, or NULL */
    chat_cp cp;         /* checkpoints for /undo, /diff */
    char logdir[4200];  /* the session's task logs and tmp folder, removed at exit */
    char *model_name;   /* for /model */
    /* /cost: tokens of each turn, and of /compact requests */
    int64_t *turn_in, *turn_out;
    size_t nturns;
    int64_t extra_in, extra_out;
    int last_rc;         /* CLI_RUN_* of the last turn */
    char last_err[1024]; /* its error, when it failed */
} chat;

static const char system_prompt[] =
    "You are a coding agent working in the user's workspace through the tools you are "
    "given. Read before you edit; keep changes small and explain them briefly. Use Bash for "
    "builds and tests; start long-running commands in the background and wait for their "
    "notification. When the user declines a tool call, do not retry it unchanged: ask or take "
    "another approach.";

static void usage(FILE *f)
{
    fprintf(f,
            "usage: agt-chat [options]\n"
            "\n"
            "  -p, --print PROMPT  answer one prompt and exit (approvals are read from stdin);\n"
            "                      the exit status is 1 when the turn failed\n"
            "  --output-format F   with -p: text (default), json (one result object at the\n"
            "                      end) or stream-json (one event per line, then the result)\n"
            "  --yolo              never ask before running tools (ExitPlanMode still asks)\n"
            "  --plan              start in plan mode (read-only but for the plan file)\n"
            "  --root DIR          workspace root (default: current directory)\n"
            "  --allow RULE        allow calls the rule matches without asking (repeatable;\n"
            "                      e.g. 'Bash(git log *)', 'Edit(src/**)', 'WebSearch')\n"
            "  --ask RULE          always ask for them (repeatable)\n"
            "  --deny RULE         refuse them (repeatable)\n"
            "  --plan-file FILE    the plan file of plan mode (default: a new file in\n"
            "                      $XDG_STATE_HOME/agenttools/plans)\n"
            "  --resume FILE       continue a conversation saved with /save\n"
            "  --max-turns N       model turns per prompt (default 50)\n"
            "  --wait-tasks SECS   in print mode, wait this long for background tasks to end "
            "(default 120)\n"
            "  --no-color          no ANSI colours\n"
            "  --version           print the program name and the library version, "
            "exit\n" CLI_SANDBOX_USAGE "\n"
            "%s"
            "\n"
            "slash commands: /tasks /cron /todo /mode [manual|plan|yolo|auto] /permissions\n"
            "                /save FILE /help /quit. Ctrl-C interrupts the running turn (and\n"
            "                kills a running Bash command); twice at the prompt, or Ctrl-D,\n"
            "                quits.\n",
            cli_config_usage);
}

/* --sandbox, --network, --add-dir, ... (applied once the session exists) */
static cli_sandbox g_sandbox;

static int parse_args(chat *c, int argc, char **argv)
{
    char err[512];
    cli_sandbox_init(&g_sandbox);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int took = cli_config_take_arg(&c->cfg, argc, argv, &i, err, sizeof err);
        if (took == 0)
            took = cli_sandbox_arg(&g_sandbox, argc, argv, &i, err, sizeof err);
        if (took < 0) {
            fprintf(stderr, "agt-chat: %s\n", err);
            return -1;
        }
        if (took > 0)
            continue;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            exit(0);
        } else if (strcmp(a, "--version") == 0) {
            printf("agt-chat %s\n", agt_version());
            exit(0);
        } else if (strcmp(a, "--yolo") == 0) {
            c->ui.yolo = 1;
        } else if (strcmp(a, "--plan") == 0) {
            c->plan = 1;
        } else if (strcmp(a, "--no-color") == 0) {
            c->ui.color = -1;
        } else if (strcmp(a, "-p") == 0 || strcmp(a, "--print") == 0 ||
                   strcmp(a, "--resume") == 0 || strcmp(a, "--root") == 0 ||
                   strcmp(a, "--plan-file") == 0 || strcmp(a, "--output-format") == 0 ||
                   strcmp(a, "--allow") == 0 || strcmp(a, "--ask") == 0 ||
                   strcmp(a, "--deny") == 0 || strcmp(a, "--max-turns") == 0 ||
                   strcmp(a, "--wait-tasks") == 0) {
            if (i + 1 >= argc) {
                fprintf(stderr, "agt-chat: %s needs a value (see --help)\n", a);
                return -1;
            }
            const char *v = argv[++i];
            if (strcmp(a, "--resume") == 0) {
                c->resume = v;
            } else if (strcmp(a, "--root") == 0) {
                c->root_opt = v;
            } else if (strcmp(a, "--allow") == 0 || strcmp(a, "--ask") == 0 ||
                       strcmp(a, "--deny") == 0) {
                if (c->nrules >= 64) {
                    fprintf(stderr, "agt-chat: at most 64 --allow/--ask/--deny rules\n");
                    return -1;
                }
                c->rules[c->nrules] = v;
                c->rule_kinds[c->nrules++] = a[2] == 'a' && a[3] == 'l' ? AGT_RULE_ALLOW
                                             : a[2] == 'a'              ? AGT_RULE_ASK
                                                                        : AGT_RULE_DENY;
            } else if (strcmp(a, "--plan-file") == 0) {
                c->plan_file = v;
            } else if (strcmp(a, "--output-format") == 0) {
                c->out.format = chat_out_parse(v);
                if (c->out.format < 0) {
                    fprintf(stderr,
                            "agt-chat: --output-format \"%s\": use text, json or stream-json\n", v);
                    return -1;
                }
            } else if (a[1] == 'p' || strcmp(a, "--print") == 0) {
                c->print_prompt = v;
            } else {
                char *end = NULL;
                long n = strtol(v, &end, 10);
                if (end == v || *end != '\0' || n < 1 || n > 100000) {
                    fprintf(stderr, "agt-chat: %s wants a whole number from 1 to 100000\n", a);
                    return -1;
                }
                if (strcmp(a, "--max-turns") == 0)
                    c->max_turns = (int)n;
                else
                    c->wait_tasks_s = n;
            }
        } else {
            fprintf(stderr, "agt-chat: unknown option \"%s\" (see --help)\n", a);
            return -1;
        }
    }
    if (c->out.format != CHAT_OUT_TEXT && c->print_prompt == NULL) {
        fprintf(stderr, "agt-chat: --output-format is for print mode: add -p PROMPT\n");
        return -1;
    }
    if (c->ui.yolo && c->plan) {
        fprintf(stderr, "agt-chat: --yolo and --plan exclude each other\n");
        return -1;
    }
    return 0;
}

/* Streaming: answer text on stdout as it arrives, the rest on stderr. */
static void on_text(const char *text, size_t len, void *payload)
{
    chat *c = payload;
    if (c->out.format == CHAT_OUT_STREAM)
        chat_out_line(json_pack("{s:s, s:o}", "type", "text", "text",
                                chat_out_string(text, len, NULL, NULL)));
    if (c->out.format != CHAT_OUT_TEXT)
        return;
    if (c->md_on) {
        /* rendered a block at a time; what is held is written at md_flush */
        chat_md_stream_feed(&c->md, text, len, stdout);
        return;
    }
    fwrite(text, 1, len, stdout);
    fflush(stdout);
    if (len > 0)
        c->at_line_start = text[len - 1] == '\n';
}

/* The end of an answer (a tool call starts, the turn ends): the markdown
 * held back is rendered now. */
static void md_flush(chat *c)
{
    if (c->md_on)
        chat_md_stream_flush(&c->md, stdout);
}

/* ExitPlanMode's plan on stderr, rendered when stderr is a terminal. */
static void render_plan(FILE *f, const char *markdown, void *payload)
{
    chat *c = payload;
    char *out = chat_md_render(markdown, strlen(markdown), c->ui.color);
    fputs(out != NULL ? out : markdown, f);
    free(out);
}

static void on_thinking(const char *text, size_t len, void *payload)
{
    chat *c = payload;
    if (c->ui.interactive)
        fprintf(stderr, "%s%.*s%s", c->ui.color ? "\033[2m" : "", (int)len, text,
                c->ui.color ? "\033[0m" : "");
}

/* The words of a call's card: what it works on. */
static const char *call_subject(json_t *a)
{
    static const char *const keys[] = {"command", "path", "pattern", "url",
                                       "query",   "cron", "task_id", "description"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        const char *v = json_string_value(json_object_get(a, keys[i]));
        if (v != NULL)
            return v;
    }
    return NULL;
}

/* Clears the spinner line of the live card, if one is shown. */
static void card_unspin(chat *c)
{
    if (c->card_spinner) {
        fputs("\r\033[K", stderr);
        c->card_spinner = 0;
    }
}

/* The spinner (a terminal with colours only): the call and its elapsed time. */
static void card_spin(chat *c)
{
    static const char *const frames[] = {"|", "/", "-", "\\"};
    if (!c->ui.color || !c->ui.interactive || !c->card_bol || c->card_id[0] == '\0')
        return;
    int64_t s = (cli_now_ms() - c->card_started_ms) / 1000;
    fprintf(stderr, "\r\033[K\033[33m%s\033[0m %s \033[2m%llds  (Ctrl-C interrupts)\033[0m",
            frames[c->card_frame++ % 4], c->card_title, (long long)s);
    fflush(stderr);
    c->card_spinner = 1;
}

static void on_tool_started(const char *id, const char *name, const char *args, void *payload)
{
    chat *c = payload;
    md_flush(c);
    json_t *a = json_loads(args != NULL ? args : "{}", 0, NULL);
    const char *what = call_subject(a);
    snprintf(c->card_id, sizeof c->card_id, "%s", id);
    snprintf(c->card_title, sizeof c->card_title, "%s%s%.120s", name, what != NULL ? " " : "",
             what != NULL ? what : "");
    json_decref(a);
    c->card_started_ms = cli_now_ms();
    c->card_bol = 1;
    c->running++;
    c->out.ncarry = 0;
    if (c->out.format == CHAT_OUT_STREAM) {
        json_t *ja = json_loads(args != NULL ? args : "{}", 0, NULL);
        chat_out_line(json_pack("{s:s, s:s, s:s, s:o}", "type", "tool_started", "id", id, "name",
                                name, "arguments", ja != NULL ? ja : json_object()));
    }
}

/* agt_session_set_tool_output_callback: a foreground Bash command's output
 * streams into its card as "  | line"; Ctrl-C (g_cancel) interrupts it. */
static int on_tool_output(const char *call_id, const char *tool, const char *data, size_t len,
                          void *payload)
{
    chat *c = payload;
    (void)tool;
    if (strcmp(call_id, c->card_id) != 0)
        snprintf(c->card_id, sizeof c->card_id, "%s", call_id);
    if (g_cancel) {
        /* the terminal echoed ^C where the cursor was: the summary goes
           below it */
        card_unspin(c);
        fputc('\n', stderr);
        c->card_bol = 1;
        return 1;
    }
    if (data == NULL) {
        card_spin(c);
        return 0;
    }
    card_unspin(c);
    if (c->out.format == CHAT_OUT_STREAM)
        chat_out_line(json_pack("{s:s, s:s, s:o}", "type", "tool_output", "id", call_id, "data",
                                chat_out_string(data, len, c->out.carry, &c->out.ncarry)));
    if (!c->at_line_start) {
        fputc('\n', stdout);
        fflush(stdout);
        c->at_line_start = 1;
    }
    const char *dim = c->ui.color ? "\033[2m" : "", *off = c->ui.color ? "\033[0m" : "";
    for (size_t i = 0; i < len;) {
        const char *nl = memchr(data + i, '\n', len - i);
        size_t n = nl != NULL ? (size_t)(nl - (data + i)) + 1 : len - i;
        if (c->card_bol)
            fprintf(stderr, "%s  | ", dim);
        else
            fputs(dim, stderr);
        fwrite(data + i, 1, n, stderr);
        fputs(off, stderr);
        c->card_bol = data[i + n - 1] == '\n';
        i += n;
    }
    fflush(stderr);
    card_spin(c);
    return 0;
}

/* A call ended: its card collapses to one line, with its own arguments
 * (matched by event id: the calls of a parallel group start together). */
static void on_tool(const char *id, const char *name, const char *args, int is_error,
                    const char *preview, void *payload)
{
    chat *c = payload;
    card_unspin(c);
    md_flush(c);
    /* calls that all started before the first ended ran as a parallel group */
    if (c->group_left == 0 && c->running > 1) {
        fprintf(stderr, "(%d calls in parallel)\n", c->running);
        c->group_left = c->running;
    }
    if (c->running > 0)
        c->running--;
    if (c->group_left > 0)
        c->group_left--;
    if (c->out.format != CHAT_OUT_TEXT)
        chat_out_call(&c->out, id, name, args, is_error, preview);
    if (strcmp(id, c->card_id) == 0) {
        if (!c->card_bol)
            fputc('\n', stderr);
        c->card_id[0] = '\0';
        c->card_bol = 1;
    }
    if (!c->at_line_start) {
        fputc('\n', stdout);
        fflush(stdout);
        c->at_line_start = 1;
    }
    json_t *a = json_loads(args != NULL ? args : "{}", 0, NULL);
    const char *what = call_subject(a);
    const char *nl = strchr(preview, '\n');
    int first = nl != NULL ? (int)(nl - preview) : (int)strlen(preview);
    if (first > 100)
        first = 100;
    fprintf(stderr, "%s%s %s%s%s%s: %.*s\n",
            c->ui.color ? (is_error ? "\033[31m" : "\033[32m") : "", is_error ? "x" : "*", name,
            what != NULL ? " " : "", what != NULL ? what : "", c->ui.color ? "\033[0m" : "", first,
            preview);
    json_decref(a);
}

static void on_notification(const char *event_json, void *payload)
{
    chat *c = payload;
    json_t *e = json_loads(event_json, 0, NULL);
    if (c->out.format == CHAT_OUT_STREAM && e != NULL)
        chat_out_line(json_pack("{s:s, s:O}", "type", "notification", "event", e));
    const char *type = json_string_value(json_object_get(e, "type"));
    if (type != NULL && strcmp(type, "task_finished") == 0)
        fprintf(stderr, "[task %s %s]\n", json_string_value(json_object_get(e, "task_id")),
                json_string_value(json_object_get(e, "status")));
    else if (type != NULL)
        fprintf(stderr, "[cron %s fired]\n", json_string_value(json_object_get(e, "id")));
    json_decref(e);
}

static int run_turn(chat *c)
{
    char err[1024] = "";
    g_cancel = 0;
    agt_session_set_idle(c->session, 0);
    c->at_line_start = 1;
    int64_t in0 = c->agent.prompt_tokens, out0 = c->agent.completion_tokens;
    chat_cp_begin_turn(&c->cp);
    int rc = cli_agent_run(&c->agent, err, sizeof err);
    g_cancel = 0; /* the Ctrl-C that interrupted it is used up */
    chat_cp_end_turn(&c->cp);
    int64_t *ti = realloc(c->turn_in, (c->nturns + 1) * sizeof *ti);
    if (ti != NULL) {
        c->turn_in = ti;
        int64_t *to = realloc(c->turn_out, (c->nturns + 1) * sizeof *to);
        if (to != NULL) {
            c->turn_out = to;
            c->turn_in[c->nturns] = c->agent.prompt_tokens - in0;
            c->turn_out[c->nturns++] = c->agent.completion_tokens - out0;
        }
    }
    md_flush(c);
    agt_session_set_idle(c->session, 1);
    c->last_rc = rc;
    snprintf(c->last_err, sizeof c->last_err, "%s", err);
    if (!c->at_line_start)
        fputc('\n', stdout);
    fflush(stdout);
    switch (rc) {
    case CLI_RUN_CANCELLED:
        fprintf(stderr, "(cancelled)\n");
        cli_agent_add_user(&c->agent, "[The user interrupted the previous turn.]");
        return 0;
    case CLI_RUN_TURNS:
        fprintf(stderr, "agt-chat: stopped after %d model turns (--max-turns)\n", c->max_turns);
        return 0;
    case CLI_RUN_ERROR:
        fprintf(stderr, "agt-chat: %s\n", err);
        return -1;
    default:
        return 0;
    }
}

/* Shows each session event and queues it for the model; returns how many. */
/* A background sub-agent waits for approvals (agt_session_tick() event
 * approval_needed): the user answers each call here; the task goes on by
 * itself once all are answered. */
static void answer_task_approvals(chat *c, json_t *e)
{
    json_t *calls = json_object_get(e, "calls");
    for (size_t k = 0; k < json_array_size(calls); k++) {
        json_t *item = json_array_get(calls, k);
        char *req = json_dumps(item, JSON_COMPACT);
        char *reason = NULL;
        int decision = req ? chat_ask(&c->ui, req, &reason) : AGT_DECISION_REJECT;
        const char *id = json_string_value(json_object_get(item, "call_id"));
        if (id != NULL && agt_agent_answer(c->agent.agent, id, decision, reason) != AGT_OK)
            fprintf(stderr, "agt-chat: %s\n", agt_error_message());
        free(reason);
        free(req);
    }
}

static int queue_events(chat *c, json_t *arr)
{
    int n = 0;
    for (size_t i = 0; i < json_array_size(arr); i++) {
        json_t *e = json_array_get(arr, i);
        const char *type = json_string_value(json_object_get(e, "type"));
        if (type != NULL && strcmp(type, "approval_needed") == 0)
            answer_task_approvals(c, e);
        const char *msg = json_string_value(json_object_get(e, "message"));
        if (msg == NULL)
            continue;
        char *one = json_dumps(e, JSON_COMPACT);
        if (one != NULL)
            on_notification(one, c);
        free(one);
        cli_agent_add_notification(&c->agent, msg);
        n++;
    }
    return n;
}

/* Ticks the session; each event is shown and queued for the model. */
static int take_events(chat *c)
{
    char *ev = NULL;
    if (agt_session_tick(c->session, -1, &ev) != AGT_OK)
        return 0;
    json_t *arr = json_loads(ev, 0, NULL);
    agt_free(ev);
    int n = queue_events(c, arr);
    json_decref(arr);
    return n;
}

static size_t running_tasks(chat *c)
{
    size_t n = 0;
    agt_session_poll_fds(c->session, NULL, 0, &n);
    return n;
}

/* Print mode: wait for background tasks, feeding their notifications. */
static int wait_tasks(chat *c)
{
    int64_t limit = cli_now_ms() + c->wait_tasks_s * 1000;
    while (cli_now_ms() < limit && !g_cancel) {
        if (take_events(c) > 0) {
            if (run_turn(c) != 0)
                return -1;
            continue;
        }
        size_t n = running_tasks(c);
        if (n == 0)
            return 0;
        int fds[64];
        size_t got = 0;
        agt_session_poll_fds(c->session, fds, 64, &got);
        struct pollfd p[64];
        for (size_t k = 0; k < got && k < 64; k++) {
            p[k].fd = fds[k];
            p[k].events = POLLIN;
            p[k].revents = 0;
        }
        poll(p, got < 64 ? got : 64, 200);
    }
    if (running_tasks(c) > 0)
        fprintf(stderr, "agt-chat: background tasks still running after %lld s (--wait-tasks)\n",
                (long long)c->wait_tasks_s);
    return 0;
}

static const char *mode_name(int m)
{
    static const char *names[] = {"manual", "plan", "yolo", "auto"};
    return m >= 0 && m < 4 ? names[m] : "?";
}

static void run_tool_command(chat *c, const char *tool, const char *args)
{
    agt_result *r = NULL;
    if (agt_session_dispatch(c->session, "slash", tool, args, &r) == AGT_OK) {
        printf("%s\n", agt_result_text(r));
        agt_result_free(r);
    } else {
        printf("%s: %s\n", tool, agt_error_message());
    }
}

/* /cron [list] | delete ID | pause ID | resume ID: the user's own actions on
 * the scheduled prompts, through the host API (no model call, no approval). */
static void cron_command(chat *c, const char *arg)
{
    char verb[16] = "";
    size_t n = 0;
    while (*arg && *arg != ' ' && n + 1 < sizeof verb)
        verb[n++] = *arg++;
    verb[n] = '\0';
    while (*arg == ' ')
        arg++;
    if (verb[0] == '\0' || strcmp(verb, "list") == 0) {
        run_tool_command(c, "CronList", "{}");
        return;
    }
    int rc;
    const char *done;
    if (*arg == '\0') {
        printf("usage: /cron [list] | /cron delete ID | /cron pause ID | /cron resume ID\n");
        return;
    }
    if (strcmp(verb, "delete") == 0) {
        rc = agt_session_cron_delete(c->session, arg);
        done = "deleted";
    } else if (strcmp(verb, "pause") == 0) {
        rc = agt_session_cron_set_paused(c->session, arg, 1);
        done = "paused";
    } else if (strcmp(verb, "resume") == 0) {
        rc = agt_session_cron_set_paused(c->session, arg, 0);
        done = "resumed";
    } else {
        printf("/cron: unknown action '%s' (list, delete, pause, resume)\n", verb);
        return;
    }
    if (rc == AGT_OK)
        printf("cron job %s %s\n", arg, done);
    else
        printf("/cron %s: %s\n", verb, agt_error_message());
}

static int save_chat(chat *c, const char *path)
{
    char *state = NULL;
    if (agt_session_save(c->session, &state) != AGT_OK) {
        fprintf(stderr, "agt-chat: save: %s\n", agt_error_message());
        return -1;
    }
    json_t *s = json_loads(state, 0, NULL);
    agt_free(state);
    char *agent = NULL;
    if (agt_agent_save(c->agent.agent, &agent) != AGT_OK) {
        fprintf(stderr, "agt-chat: save: %s\n", agt_error_message());
        json_decref(s);
        return -1;
    }
    json_t *doc = json_pack("{s:s, s:o, s:o}", "format", "agt-chat/1", "session", s, "agent",
                            json_loads(agent, 0, NULL));
    agt_free(agent);
    int rc = json_dump_file(doc, path, JSON_INDENT(1));
    json_decref(doc);
    if (rc != 0) {
        fprintf(stderr, "agt-chat: cannot write %s\n", path);
        return -1;
    }
    fprintf(stderr, "saved to %s\n", path);
    return 0;
}

static int resume_chat(chat *c, const char *path)
{
    json_error_t je;
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr,
                "agt-chat: --resume %s: cannot open the file: %s (give a file written "
                "by /save FILE)\n",
                path, strerror(errno));
        return -1;
    }
    json_t *doc = json_loadf(f, 0, &je);
    fclose(f);
    if (doc == NULL) {
        fprintf(stderr,
                "agt-chat: --resume %s: not JSON (line %d: %s); give a file written by "
                "/save FILE\n",
                path, je.line, je.text);
        return -1;
    }
    json_t *s = json_object_get(doc, "session"), *ag = json_object_get(doc, "agent");
    if (!json_is_object(s) || !json_is_object(ag)) {
        fprintf(stderr, "agt-chat: --resume %s: not a file written by /save\n", path);
        json_decref(doc);
        return -1;
    }
    char *text = json_dumps(s, JSON_COMPACT);
    int rc = agt_session_restore(c->session, text, strlen(text));
    free(text);
    if (rc == AGT_OK) {
        text = json_dumps(ag, JSON_COMPACT);
        rc = agt_agent_restore(c->agent.agent, text, strlen(text));
        free(text);
    }
    if (rc != AGT_OK) {
        fprintf(stderr, "agt-chat: --resume %s: %s\n", path, agt_error_message());
        json_decref(doc);
        return -1;
    }
    fprintf(stderr, "resumed %zu messages from %s (mode %s)\n",
            json_array_size(json_object_get(ag, "messages")), path,
            mode_name(agt_session_mode(c->session)));
    json_decref(doc);
    return 0;
}

static int agent_start(chat *c, char *err, size_t errlen);

/* /clear: a new conversation; with summary, it starts from that. */
static void clear_command(chat *c, const char *summary)
{
    char err[1024];
    cli_agent_fini(&c->agent);
    if (agent_start(c, err, sizeof err) != 0) {
        fprintf(stderr, "agt-chat: /clear: %s\n", err);
        return;
    }
    if (summary != NULL) {
        size_t len = strlen(summary) + 128;
        char *text = malloc(len);
        if (text != NULL) {
            snprintf(text, len,
                     "<conversation-summary>\n%s\n</conversation-summary>\nThe conversation "
                     "so far, summarised; go on from here.",
                     summary);
            cli_agent_add_user(&c->agent, text);
        }
        free(text);
        return;
    }
    printf("conversation cleared\n");
}

static const char compact_prompt[] =
    "Summarise this conversation so that you can go on from the summary alone: what the user "
    "asked for, what was decided, the files read and changed, what was done and what is left "
    "to do. Answer with the summary only, no tool calls.";

/* /compact: the model summarises the conversation (one request, tools
 * offered but not run), which then replaces it. */
static void compact_command(chat *c)
{
    char *msgs = NULL, *tools = NULL;
    if (agt_agent_messages(c->agent.agent, &msgs) != AGT_OK) {
        printf("/compact: %s\n", agt_error_message());
        return;
    }
    json_t *arr = json_loads(msgs, 0, NULL);
    agt_free(msgs);
    size_t before = json_array_size(arr);
    json_array_append_new(arr, json_pack("{s:s, s:s}", "role", "user", "content", compact_prompt));
    char *text = json_dumps(arr, JSON_COMPACT);
    json_decref(arr);
    agt_registry_export(c->reg, "openai", agt_session_phase(c->session), &tools);
    agt_model_response *r = NULL;
    g_cancel = 0;
    int rc = text != NULL ? agt_model_complete(&r, c->model, text, strlen(text), tools,
                                               tools != NULL ? strlen(tools) : 0)
                          : AGT_ENOMEM;
    free(text);
    agt_free(tools);
    g_cancel = 0; /* a Ctrl-C that cancelled the request is used up */
    const char *summary = rc == AGT_OK ? agt_model_response_text(r) : NULL;
    if (rc != AGT_OK || summary == NULL || summary[0] == '\0') {
        printf("/compact: %s; the conversation is unchanged\n",
               rc != AGT_OK ? agt_error_message() : "the model gave no summary");
        agt_model_response_free(r);
        return;
    }
    int64_t p = 0, cpl = 0, t = 0;
    agt_model_response_usage(r, &p, &cpl, &t);
    c->extra_in += p > 0 ? p : 0;
    c->extra_out += cpl > 0 ? cpl : 0;
    size_t len = strlen(summary);
    clear_command(c, summary);
    printf("compacted %zu messages into a summary of %zu bytes\n", before, len);
    agt_model_response_free(r);
}

/* /cost: tokens per turn and in all; the price when the provider has one. */
static void cost_command(chat *c)
{
    int64_t in = c->extra_in, out = c->extra_out;
    for (size_t i = 0; i < c->nturns; i++) {
        printf("turn %zu: %lld in, %lld out\n", i + 1, (long long)c->turn_in[i],
               (long long)c->turn_out[i]);
        in += c->turn_in[i];
        out += c->turn_out[i];
    }
    if (c->extra_in > 0 || c->extra_out > 0)
        printf("/compact: %lld in, %lld out\n", (long long)c->extra_in, (long long)c->extra_out);
    printf("total: %lld in, %lld out\n", (long long)in, (long long)out);
    if (c->cfg.price_input >= 0 && c->cfg.price_output >= 0)
        printf("cost: %.6f (%g per million in, %g per million out)\n",
               ((double)in * c->cfg.price_input + (double)out * c->cfg.price_output) / 1e6,
               c->cfg.price_input, c->cfg.price_output);
    else
        printf("cost: unknown (set the provider's \"prices\" in the config file)\n");
}

static int slash(chat *c, const char *line)
{
    char cmd[32] = "";
    const char *arg = line + 1;
    size_t n = 0;
    while (*arg != '\0' && *arg != ' ' && n + 1 < sizeof cmd)
        cmd[n++] = *arg++;
    cmd[n] = '\0';
    while (*arg == ' ')
        arg++;
    if (strcmp(cmd, "quit") == 0 || strcmp(cmd, "exit") == 0)
        return 1;
    if (strcmp(cmd, "tasks") == 0) {
        run_tool_command(c, "TaskList", "{\"active_only\":false}");
    } else if (strcmp(cmd, "cron") == 0) {
        cron_command(c, arg);
    } else if (strcmp(cmd, "todo") == 0) {
        char *t = NULL;
        if (agt_session_todos(c->session, &t) == AGT_OK) {
            json_t *arr = json_loads(t, 0, NULL);
            if (json_array_size(arr) == 0)
                printf("(no todos)\n");
            for (size_t i = 0; i < json_array_size(arr); i++) {
                json_t *e = json_array_get(arr, i);
                const char *st = json_string_value(json_object_get(e, "status"));
                printf("[%s] %s\n",
                       st == NULL                       ? " "
                       : strcmp(st, "done") == 0        ? "x"
                       : strcmp(st, "in_progress") == 0 ? ">"
                                                        : " ",
                       json_string_value(json_object_get(e, "title")));
            }
            json_decref(arr);
            agt_free(t);
        }
    } else if (strcmp(cmd, "mode") == 0) {
        if (arg[0] != '\0') {
            int m = -1;
            for (int k = 0; k < 4; k++)
                if (strcmp(arg, mode_name(k)) == 0)
                    m = k;
            if (m < 0 || agt_session_set_mode(c->session, m) != AGT_OK)
                printf("unknown mode \"%s\": manual, plan, yolo or auto\n", arg);
        }
        printf("mode: %s\n", mode_name(agt_session_mode(c->session)));
    } else if (strcmp(cmd, "save") == 0) {
        if (arg[0] == '\0')
            printf("usage: /save FILE\n");
        else
            save_chat(c, arg);
    } else if (strcmp(cmd, "clear") == 0) {
        clear_command(c, NULL);
    } else if (strcmp(cmd, "compact") == 0) {
        compact_command(c);
    } else if (strcmp(cmd, "model") == 0) {
        if (arg[0] != '\0') {
            char *name = strdup(arg);
            if (name == NULL || agt_model_set_name(c->model, arg) != AGT_OK) {
                printf("/model: %s\n", name == NULL ? "out of memory" : agt_error_message());
                free(name);
            } else {
                free(c->model_name);
                c->model_name = name;
            }
        }
        printf("model: %s\n", c->model_name);
    } else if (strcmp(cmd, "cost") == 0) {
        cost_command(c);
    } else if (strcmp(cmd, "diff") == 0) {
        chat_cp_diff(&c->cp, c->ui.root, stdout, c->ui.color && isatty(1));
    } else if (strcmp(cmd, "undo") == 0) {
        char *note = chat_cp_undo(&c->cp, c->ui.root, stdout);
        if (note != NULL)
            cli_agent_add_user(&c->agent, note);
        free(note);
    } else if (strcmp(cmd, "permissions") == 0) {
        char path[4200];
        chat_settings_path(c->ui.root, path, sizeof path);
        chat_rules_print(stdout, c->session, c->cfg.config_path, c->project_rules ? path : NULL);
    } else if (strcmp(cmd, "help") == 0) {
        printf(
            "/tasks  background tasks\n/cron   scheduled prompts (/cron delete|pause|resume "
            "ID)\n/todo   the todo list\n"
            "/mode [manual|plan|yolo|auto]\n/permissions  the tool rules and where they come from\n"
            "/clear  a new conversation (the session's tasks, todos and rules stay)\n"
            "/compact  the conversation summarised by the model, to go on from\n"
            "/model [NAME]  the model name sent to the server\n"
            "/cost  tokens in and out per turn and in all (and their price)\n"
            "/diff  what the session changed in the files it wrote\n"
            "/undo  the files of the last turn that wrote any, back as they were\n"
            "/save FILE  save the conversation and session\n"
            "/quit\n");
    } else {
        printf("unknown command /%s (try /help)\n", cmd);
    }
    return 0;
}

/* libedit's callback interface: the line arrives here. */
static char *g_line;
static int g_line_ready;

static void line_handler(char *line)
{
    g_line = line;
    g_line_ready = 1;
    rl_callback_handler_remove();
}

enum { PROMPT_LINE = 0, PROMPT_EOF = 1, PROMPT_EVENTS = 2, PROMPT_INTERRUPT = 3 };

/*
 * Reads a line at the prompt while watching the background tasks and the cron
 * table: a task that ends or a cron fire that falls due while the user is idle
 * starts a turn at once (PROMPT_EVENTS), without waiting for Enter.
 */
static int prompt_line(chat *c, const char *prompt, char **out)
{
    *out = NULL;
    g_line = NULL;
    g_line_ready = 0;
    rl_callback_handler_install(prompt, line_handler);
    for (;;) {
        struct pollfd p[65];
        int fds[64];
        size_t n = 0;
        agt_session_poll_fds(c->session, fds, 64, &n);
        if (n > 64)
            n = 64;
        p[0].fd = 0;
        p[0].events = POLLIN;
        p[0].revents = 0;
        for (size_t k = 0; k < n; k++) {
            p[k + 1].fd = fds[k];
            p[k + 1].events = POLLIN;
            p[k + 1].revents = 0;
        }
        int timeout = 1000;
        int64_t due = -1;
        int64_t now = cli_wall_ms();
        if (agt_session_next_deadline(c->session, now, &due) == AGT_OK && due >= 0)
            timeout = due <= now ? 0 : (due - now < 1000 ? (int)(due - now) : 1000);
        /* SIGINT is blocked from the look at the flag until ppoll waits, so a
           Ctrl-C that comes just as the prompt is shown is not lost */
        sigset_t block, orig;
        sigemptyset(&block);
        sigaddset(&block, SIGINT);
        sigprocmask(SIG_BLOCK, &block, &orig);
        int r = -1;
        errno = EINTR;
        if (!g_cancel) {
            struct timespec ts = {timeout / 1000, (long)(timeout % 1000) * 1000000L};
            r = ppoll(p, n + 1, &ts, &orig);
        }
        int e = errno;
        sigprocmask(SIG_SETMASK, &orig, NULL);
        errno = e;
        if (r < 0 && errno == EINTR && g_cancel) {
            rl_callback_handler_remove();
            g_cancel = 0;
            return PROMPT_INTERRUPT;
        }
        if (r > 0 && (p[0].revents & (POLLIN | POLLHUP)) != 0) {
            rl_callback_read_char();
            if (g_line_ready) {
                *out = g_line;
                return g_line != NULL ? PROMPT_LINE : PROMPT_EOF;
            }
            continue;
        }
        if (r < 0)
            continue;
        /* a task has output or ended, or a deadline passed: look */
        char *ev = NULL;
        if (agt_session_tick(c->session, -1, &ev) == AGT_OK) {
            json_t *arr = json_loads(ev, 0, NULL);
            size_t got = json_array_size(arr);
            if (got > 0) {
                rl_callback_handler_remove();
                fputc('\n', stderr);
                queue_events(c, arr);
            }
            json_decref(arr);
            agt_free(ev);
            if (got > 0)
                return PROMPT_EVENTS;
        }
    }
}

/* $XDG_STATE_HOME/agenttools/history (~/.local/state/... without it); its
 * folders are made (mode 0700). -1 without a home. */
static int history_path(char *buf, size_t len)
{
    const char *state = getenv("XDG_STATE_HOME");
    const char *home = getenv("HOME");
    char dir[4100];
    if (state != NULL && state[0] == '/')
        snprintf(dir, sizeof dir, "%s/agenttools", state);
    else if (home != NULL && home[0] == '/')
        snprintf(dir, sizeof dir, "%s/.local/state/agenttools", home);
    else
        return -1;
    /* each missing folder of the path, outermost first */
    for (char *p = dir + 1; *p != '\0'; p++) {
        if (*p == '/') {
            *p = '\0';
            mkdir(dir, 0700);
            *p = '/';
        }
    }
    if (mkdir(dir, 0700) != 0 && errno != EEXIST)
        return -1;
    int n = snprintf(buf, len, "%s/history", dir);
    return n > 0 && (size_t)n < len ? 0 : -1;
}

static int interactive(chat *c)
{
    char desc[512];
    cli_config_describe(&c->cfg, desc, sizeof desc);
    fprintf(stderr, "agt-chat %s: %s; workspace %s; mode %s. /help for commands, Ctrl-D quits.\n",
            agt_version(), desc, c->ui.root, mode_name(agt_session_mode(c->session)));
    if (c->instructions != NULL)
        fprintf(stderr, "instructions: %s\n", c->instructions);
    using_history();
    char hist[4200];
    int have_hist = c->ui.interactive && history_path(hist, sizeof hist) == 0;
    if (have_hist) {
        stifle_history(1000);
        read_history(hist);
    }
    int interrupts = 0, hist_warned = 0;
    for (;;) {
        if (take_events(c) > 0) {
            run_turn(c);
            interrupts = 0;
            continue;
        }
        char prompt[32];
        snprintf(prompt, sizeof prompt, "%s> ",
                 agt_session_mode(c->session) == AGT_MODE_PLAN ? "plan" : "");
        char *line = NULL;
        if (c->ui.interactive) {
            int got = prompt_line(c, prompt, &line);
            if (got == PROMPT_EVENTS) {
                run_turn(c);
                interrupts = 0;
                continue;
            }
            if (got == PROMPT_INTERRUPT) {
                /* a second Ctrl-C in a row at the idle prompt quits */
                if (++interrupts >= 2) {
                    fputc('\n', stderr);
                    return 0;
                }
                fputs("\n(Ctrl-C again to quit)\n", stderr);
                continue;
            }
            interrupts = 0;
        } else {
            line = chat_read_line(&c->ui, prompt);
        }
        if (line == NULL) {
            fputc('\n', stderr);
            return 0;
        }
        const char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == '\0') {
            free(line);
            continue;
        }
        add_history(p);
        if (have_hist && write_history(hist) != 0 && !hist_warned) {
            fprintf(stderr, "agt-chat: cannot write the history file %s\n", hist);
            hist_warned = 1;
        }
        if (*p == '/') {
            int quit = slash(c, p);
            free(line);
            if (quit)
                return 0;
            continue;
        }
        cli_agent_add_user(&c->agent, p);
        free(line);
        run_turn(c);
    }
}

/* The system prompt: the agent's part, then the environment and the
 * project's instructions (AGENTS.md, CLAUDE.md) as they are now. */
static int set_system(chat *c)
{
    free(c->instructions);
    c->instructions = NULL;
    char *ctx = chat_context(c->ui.root, &c->instructions);
    size_t len = sizeof system_prompt + (ctx != NULL ? strlen(ctx) : 0) + 2;
    char *text = malloc(len);
    if (text == NULL) {
        free(ctx);
        return -1;
    }
    snprintf(text, len, "%s\n\n%s", system_prompt, ctx != NULL ? ctx : "");
    int rc = cli_agent_set_system(&c->agent, text);
    free(text);
    free(ctx);
    return rc;
}

/* A new agent loop on the same session and model: a new conversation that
 * starts with the system prompt (read again). */
static int agent_start(chat *c, char *err, size_t errlen)
{
    if (cli_agent_init(&c->agent, c->model, c->session, c->max_turns, err, errlen) != 0)
        return -1;
    c->agent.cancel = &g_cancel;
    c->agent.on_text = on_text;
    c->agent.on_thinking = on_thinking;
    c->agent.on_tool = on_tool;
    c->agent.on_tool_started = on_tool_started;
    c->agent.on_notification = on_notification;
    c->agent.payload = c;
    if (set_system(c) != 0) {
        snprintf(err, errlen, "system prompt: %s", agt_error_message());
        return -1;
    }
    return 0;
}

/* The pre-tool-use hook: the file a Write, Edit or MultiEdit call is about
 * to change is kept for /undo (after approval, so a declined call keeps
 * nothing). */
static int checkpoint_hook(agt_hook *h, void *payload)
{
    chat *c = payload;
    const char *tool = agt_hook_tool(h);
    if (strcmp(tool, "Write") != 0 && strcmp(tool, "Edit") != 0 && strcmp(tool, "MultiEdit") != 0)
        return AGT_OK;
    json_t *a = json_loads(agt_hook_args(h), 0, NULL);
    const char *path = json_string_value(json_object_get(a, "path"));
    if (path == NULL)
        path = json_string_value(json_object_get(a, "file_path"));
    if (path != NULL && chat_cp_note(&c->cp, c->ui.root, path) != 0)
        fprintf(stderr, "agt-chat: %s: cannot keep its content for /undo\n", path);
    json_decref(a);
    return AGT_OK;
}

/* [p] at an approval: the rule goes into the project's settings file. */
static void persist_rule(const char *rule, void *payload)
{
    chat *c = payload;
    char err[4400], path[4200];
    if (chat_rules_persist(c->ui.root, rule, err, sizeof err) != 0) {
        fprintf(stderr, "agt-chat: %s (allowed for this session only)\n", err);
        return;
    }
    chat_settings_path(c->ui.root, path, sizeof path);
    c->project_rules = 1;
    fprintf(stderr, "allowed in this project: %s (%s)\n", rule, path);
}

static int setup(chat *c, char *err, size_t errlen)
{
    char cwd[4096];
    const char *root = c->root_opt;
    if (root == NULL)
        root = getcwd(cwd, sizeof cwd);
    if (root == NULL) {
        snprintf(err, errlen, "cannot read the current directory");
        return -1;
    }
    if (agt_registry_new(&c->reg) != AGT_OK ||
        agt_registry_load_builtin(c->reg, "chat") != AGT_OK) {
        snprintf(err, errlen, "tool catalogue: %s", agt_error_message());
        return -1;
    }
    if (agt_session_new(&c->session, c->reg, root) != AGT_OK) {
        snprintf(err, errlen, "workspace %s: %s", root, agt_error_message());
        return -1;
    }
    c->ui.root = agt_session_root(c->session);
    /* the session's logs and its commands' tmp folder live in a folder of
       our own, removed when agt-chat ends (the library leaves its default
       one to the host) */
    const char *tmp = getenv("TMPDIR");
    snprintf(c->logdir, sizeof c->logdir, "%s/agt-chat-XXXXXX",
             tmp != NULL && tmp[0] == '/' ? tmp : "/tmp");
    errno = 0;
    if (mkdtemp(c->logdir) == NULL ||
        agt_session_set_task_log_dir(c->session, c->logdir) != AGT_OK) {
        snprintf(err, errlen, "task log folder %.300s: %s", c->logdir,
                 errno != 0 ? strerror(errno) : agt_error_message());
        c->logdir[0] = '\0';
        return -1;
    }
    c->ui.session = c->session;
    c->ui.cancel = &g_cancel;
    if (cli_sandbox_apply(&g_sandbox, c->session, err, errlen) != AGT_OK)
        return -1;
    /* stored rules (the user's, the project's), then the command line's */
    char what[4200];
    snprintf(what, sizeof what, "config file %s", c->cfg.config_path);
    if (chat_rules_load(c->session, c->cfg.permissions, what, err, errlen) != 0 ||
        chat_rules_load_project(c->session, c->ui.root, &c->project_rules, err, errlen) != 0)
        return -1;
    for (int k = 0; k < c->nrules; k++) {
        if (agt_session_add_rule(c->session, c->rule_kinds[k], c->rules[k]) != AGT_OK) {
            snprintf(err, errlen, "--%s %s: %s",
                     c->rule_kinds[k] == AGT_RULE_ALLOW ? "allow"
                     : c->rule_kinds[k] == AGT_RULE_ASK ? "ask"
                                                        : "deny",
                     c->rules[k], agt_error_message());
            return -1;
        }
    }
    c->ui.persist_rule = persist_rule;
    c->ui.persist_payload = c;
    if (c->plan_file != NULL && agt_session_set_plan_file(c->session, c->plan_file) != AGT_OK) {
        snprintf(err, errlen, "--plan-file %s: %s", c->plan_file, agt_error_message());
        return -1;
    }
    if (c->ui.yolo)
        agt_session_set_mode(c->session, AGT_MODE_YOLO);
    else if (c->plan)
        agt_session_set_mode(c->session, AGT_MODE_PLAN);
    agt_session_set_approver(c->session, chat_approve, &c->ui);
    agt_session_set_idle(c->session, 1);
    if (cli_model_open(&c->cfg, &c->model, err, errlen) != 0)
        return -1;
    if (agt_session_set_tool_output_callback(c->session, on_tool_output, c) != AGT_OK ||
        agt_session_set_pre_hook(c->session, checkpoint_hook, c) != AGT_OK) {
        snprintf(err, errlen, "session callbacks: %s", agt_error_message());
        return -1;
    }
    c->model_name = strdup(c->cfg.model != NULL ? c->cfg.model : "?");
    return agent_start(c, err, errlen);
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

/* Removes a folder and everything in it (symbolic links not followed). */
static void remove_tree(const char *dir)
{
    nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static const char *stop_name(int rc)
{
    switch (rc) {
    case CLI_RUN_DONE:
        return "done";
    case CLI_RUN_TURNS:
        return "max_turns";
    case CLI_RUN_CANCELLED:
        return "cancelled";
    case CLI_RUN_TIMEOUT:
        return "timeout";
    default:
        return "error";
    }
}

/* The "result" object of --output-format json / stream-json. */
static void report_result(chat *c)
{
    char why[1100];
    const char *error = NULL;
    if (c->last_rc == CLI_RUN_ERROR) {
        error = c->last_err;
    } else if (c->last_rc == CLI_RUN_TURNS) {
        snprintf(why, sizeof why, "stopped after %d model turns (--max-turns)", c->max_turns);
        error = why;
    } else if (c->last_rc == CLI_RUN_CANCELLED) {
        error = "interrupted by the user";
    } else if (c->last_rc != CLI_RUN_DONE) {
        error = "the turn did not finish";
    }
    chat_out_result(&c->out, cli_agent_text(&c->agent), stop_name(c->last_rc), error,
                    cli_agent_turns(&c->agent), c->agent.prompt_tokens, c->agent.completion_tokens);
}

int main(int argc, char **argv)
{
    chat c;
    char err[1024] = "";
    int status = 1;
    memset(&c, 0, sizeof c);
    c.max_turns = 50;
    c.wait_tasks_s = 120;
    chat_out_init(&c.out, CHAT_OUT_TEXT);
    if (parse_args(&c, argc, argv) != 0)
        return 2;
    c.ui.interactive = c.print_prompt == NULL && isatty(0) && isatty(1);
    int no_color = c.ui.color != 0 || getenv("NO_COLOR") != NULL;
    c.ui.color = !no_color && isatty(2);
    /* markdown on a terminal (without colours under NO_COLOR or --no-color);
       the text as the model wrote it anywhere else */
    c.md_on = c.out.format == CHAT_OUT_TEXT && isatty(1);
    c.md.color = !no_color;
    if (isatty(2)) {
        c.ui.render = render_plan;
        c.ui.render_payload = &c;
    }
    if (cli_config_resolve(&c.cfg, err, sizeof err) != 0) {
        fprintf(stderr, "agt-chat: %s\n", err);
        goto out;
    }
    if (c.cfg.opt_show) {
        char desc[1024];
        cli_config_describe(&c.cfg, desc, sizeof desc);
        printf("%s\n", desc);
        status = 0;
        goto out;
    }
    if (!c.cfg.configured) {
        fprintf(stderr, "agt-chat: no model configured: pass --model NAME (and --base-url URL "
                        "for a non-OpenAI endpoint) with AGT_API_KEY exported, or define a "
                        "provider in the config file; see --help\n");
        goto out;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    if (setup(&c, err, sizeof err) != 0) {
        fprintf(stderr, "agt-chat: %s\n", err);
        goto out;
    }
    if (c.resume != NULL && resume_chat(&c, c.resume) != 0)
        goto out;
    if (c.print_prompt != NULL) {
        cli_agent_add_user(&c.agent, c.print_prompt);
        status = run_turn(&c) == 0 && wait_tasks(&c) == 0 ? 0 : 1;
        /* a turn that did not end by itself failed: the script must know */
        if (c.last_rc != CLI_RUN_DONE)
            status = 1;
        if (c.out.format != CHAT_OUT_TEXT)
            report_result(&c);
    } else {
        status = interactive(&c) == 0 ? 0 : 1;
    }
out:
    cli_agent_fini(&c.agent);
    chat_out_fini(&c.out);
    free(c.instructions);
    chat_md_stream_free(&c.md);
    chat_cp_free(&c.cp);
    free(c.model_name);
    free(c.turn_in);
    free(c.turn_out);
    agt_model_free(c.model);
    agt_session_free(c.session);
    if (c.logdir[0] != '\0')
        remove_tree(c.logdir);
    agt_registry_free(c.reg);
    cli_config_free(&c.cfg);
    return status;
}
