/*
 * agt-chat: approval prompts. Shows what the call will do (the command; for
 * Write and Edit a coloured unified diff of the file) and asks: approve once,
 * approve for the session (storing the suggested rule), or reject with a
 * reason the model is told.
 */
#include "chat.h"

#include "cli_util.h"

#include <editline/readline.h>
#include <errno.h>
#include <jansson.h>
#include <termios.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

char *chat_read_line(const chat_ui *ui, const char *prompt)
{
    if (ui->interactive)
        return readline(prompt);
    fputs(prompt, stderr);
    fflush(stderr);
    char *line = NULL;
    size_t cap = 0;
    ssize_t n = getline(&line, &cap, stdin);
    if (n < 0) {
        free(line);
        return NULL;
    }
    while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
        line[--n] = '\0';
    if (!ui->interactive)
        fputs("\n", stderr);
    return line;
}

/* A line's first character, and the rest after it (trimmed) in *rest
 * (malloc'd, NULL when empty). */
static int split_answer(char *line, char **rest)
{
    int key = (unsigned char)line[0];
    const char *r = line[0] != '\0' ? line + 1 : line;
    while (*r == ' ' || *r == ':')
        r++;
    if (rest != NULL)
        *rest = r[0] != '\0' ? strdup(r) : NULL;
    return key;
}

int chat_read_key_rest(const chat_ui *ui, const char *prompt, char **rest)
{
    if (rest != NULL)
        *rest = NULL;
    if (!ui->interactive) {
        char *line = chat_read_line(ui, prompt);
        if (line == NULL)
            return -1;
        int key = split_answer(line, rest);
        free(line);
        return key;
    }
    /* a terminal: one key, no Enter (ICANON, ECHO and ISIG off for the
     * read). The terminal is switched before the prompt is shown: a key
     * typed as soon as the prompt appears (Ctrl-C above all) would otherwise
     * reach the line discipline still in cooked mode, where ^C becomes a
     * SIGINT and not the key the read waits for. */
    struct termios old, raw;
    int have = tcgetattr(0, &old) == 0;
    if (have) {
        raw = old;
        raw.c_lflag &= (tcflag_t) ~(ICANON | ECHO | ISIG);
        raw.c_cc[VMIN] = 1;
        raw.c_cc[VTIME] = 0;
        tcsetattr(0, TCSANOW, &raw);
    }
    fputs(prompt, stderr);
    fflush(stderr);
    unsigned char ch = 0;
    ssize_t n;
    do {
        n = read(0, &ch, 1);
        /* a Ctrl-C the line discipline still turned into SIGINT (typed
         * while the turn ran, just before the prompt) is the same answer */
        if (n < 0 && errno == EINTR && ui->cancel != NULL && *ui->cancel) {
            ch = 3;
            n = 1;
        }
    } while (n < 0 && errno == EINTR);
    if (have)
        tcsetattr(0, TCSANOW, &old);
    if (n <= 0 || ch == 4) {
        fputc('\n', stderr);
        return -1;
    }
    if (ch == 3) { /* Ctrl-C: the turn is interrupted, the call declined */
        fputs("^C\n", stderr);
        if (ui->cancel != NULL)
            *ui->cancel = 1;
        return 3;
    }
    if (ch >= 0x20 && ch < 0x7f)
        fprintf(stderr, "%c\n", ch);
    else
        fputc('\n', stderr);
    return ch;
}

int chat_read_key(const chat_ui *ui, const char *prompt)
{
    return chat_read_key_rest(ui, prompt, NULL);
}

static char *resolve_path(const chat_ui *ui, const char *path)
{
    size_t len = strlen(ui->root) + strlen(path) + 2;
    char *full = malloc(len);
    if (full == NULL)
        return NULL;
    if (path[0] == '/')
        snprintf(full, len, "%s", path);
    else
        snprintf(full, len, "%s/%s", ui->root, path);
    return full;
}

/* The file's text after an Edit, or NULL when old_string is not found. */
static char *apply_edit(const char *text, const char *old_s, const char *new_s, int all)
{
    size_t ol = strlen(old_s), nl = strlen(new_s), count = 0;
    if (ol == 0)
        return NULL;
    for (const char *p = strstr(text, old_s); p != NULL; p = strstr(p + ol, old_s))
        count++;
    if (count == 0)
        return NULL;
    if (!all)
        count = 1;
    size_t len = strlen(text) + count * nl + 1;
    char *out = malloc(len), *w = out;
    if (out == NULL)
        return NULL;
    const char *p = text;
    for (size_t k = 0; k < count; k++) {
        const char *hit = strstr(p, old_s);
        memcpy(w, p, (size_t)(hit - p));
        w += hit - p;
        memcpy(w, new_s, nl);
        w += nl;
        p = hit + ol;
    }
    strcpy(w, p);
    return out;
}

static void show_file_change(const chat_ui *ui, const char *tool, json_t *args)
{
    const char *path = json_string_value(json_object_get(args, "path"));
    if (path == NULL)
        return;
    char *full = resolve_path(ui, path);
    char *old = full != NULL ? cli_read_file(full, NULL) : NULL;
    char *new_text = NULL;
    if (strcmp(tool, "Write") == 0) {
        const char *content = json_string_value(json_object_get(args, "content"));
        const char *mode = json_string_value(json_object_get(args, "mode"));
        if (content == NULL)
            content = "";
        if (mode != NULL && strcmp(mode, "append") == 0 && old != NULL) {
            size_t len = strlen(old) + strlen(content) + 1;
            new_text = malloc(len);
            if (new_text != NULL)
                snprintf(new_text, len, "%s%s", old, content);
        } else {
            new_text = strdup(content);
        }
    } else if (old != NULL) {
        const char *os = json_string_value(json_object_get(args, "old_string"));
        const char *ns = json_string_value(json_object_get(args, "new_string"));
        new_text = apply_edit(old, os != NULL ? os : "", ns != NULL ? ns : "",
                              json_is_true(json_object_get(args, "replace_all")));
        if (new_text == NULL)
            fprintf(stderr, "  (old_string is not in %s as it is now: the edit will fail)\n", path);
    } else {
        fprintf(stderr, "  (%s does not exist: the edit will fail)\n", path);
    }
    if (new_text != NULL)
        chat_print_diff(stderr, path, old, new_text, ui->color);
    free(new_text);
    free(old);
    free(full);
}

static void show_call(const chat_ui *ui, const char *tool, json_t *args)
{
    const char *b = ui->color ? "\033[1m" : "", *r = ui->color ? "\033[0m" : "";
    if (strcmp(tool, "Bash") == 0) {
        const char *cmd = json_string_value(json_object_get(args, "command"));
        const char *cwd = json_string_value(json_object_get(args, "cwd"));
        fprintf(stderr, "  %s$ %s%s\n", b, cmd != NULL ? cmd : "", r);
        if (cwd != NULL)
            fprintf(stderr, "  in %s\n", cwd);
        if (json_is_true(json_object_get(args, "run_in_background")))
            fprintf(stderr, "  (in the background)\n");
    } else if (strcmp(tool, "Write") == 0 || strcmp(tool, "Edit") == 0) {
        show_file_change(ui, tool, args);
    } else if (strcmp(tool, "CronCreate") == 0) {
        const char *cron = json_string_value(json_object_get(args, "cron"));
        const char *prompt = json_string_value(json_object_get(args, "prompt"));
        json_t *rec = json_object_get(args, "recurring");
        fprintf(stderr, "  %sschedule: %s%s (%s)\n  prompt: %s\n", b, cron != NULL ? cron : "?", r,
                rec == NULL || json_is_true(rec) ? "recurring" : "once",
                prompt != NULL ? prompt : "");
    } else {
        char *s = json_dumps(args, JSON_INDENT(2));
        if (s != NULL)
            fprintf(stderr, "%s\n", s);
        free(s);
    }
}

/* ExitPlanMode: the plan file as it is now, the model's options, and the
 * choices of the reference: Approve (or approve with option N, whose label
 * becomes the reason ExitPlanMode reads), Revise (reject with what to
 * change: the model stays in plan mode and revises) or Reject. */
static int ask_plan(const chat_ui *ui, json_t *args, char **reason)
{
    const char *b = ui->color ? "\033[1m" : "", *r = ui->color ? "\033[0m" : "";
    const char *path = ui->session != NULL ? agt_session_plan_file(ui->session) : NULL;
    char *plan = path != NULL ? cli_read_file(path, NULL) : NULL;
    fprintf(stderr, "%s--- plan (%s) ---%s\n", b, path != NULL ? path : "no plan file", r);
    if (plan != NULL) {
        if (ui->render != NULL)
            ui->render(stderr, plan, ui->render_payload);
        else
            fputs(plan, stderr);
        if (plan[0] != '\0' && plan[strlen(plan) - 1] != '\n')
            fputc('\n', stderr);
    } else {
        fprintf(stderr, "(the plan file cannot be read)\n");
    }
    fprintf(stderr, "%s---%s\n", b, r);
    free(plan);
    json_t *options = json_object_get(args, "options");
    size_t n = json_array_size(options);
    if (n > 9)
        n = 9;
    for (size_t i = 0; i < n; i++) {
        json_t *o = json_array_get(options, i);
        const char *label = json_string_value(json_object_get(o, "label"));
        const char *desc = json_string_value(json_object_get(o, "description"));
        fprintf(stderr, "  [%zu] %s%s%s%s%s\n", i + 1, b, label != NULL ? label : "?", r,
                desc != NULL ? ": " : "", desc != NULL ? desc : "");
    }
    char prompt[256];
    if (n > 0)
        snprintf(prompt, sizeof prompt,
                 "[y] approve  [1-%zu] approve with that option  [r] revise  [n] reject: ", n);
    else
        snprintf(prompt, sizeof prompt, "[y] approve  [r] revise  [n] reject: ");
    *reason = NULL;
    for (;;) {
        int key = chat_read_key(ui, prompt);
        if (key < 0) {
            *reason = strdup("no answer (input closed)");
            return AGT_DECISION_REJECT;
        }
        if (key == 3) {
            *reason = strdup("interrupted by the user");
            return AGT_DECISION_REJECT;
        }
        if (key == 'y' || key == 'Y')
            return AGT_DECISION_APPROVE;
        if (key >= '1' && key < '1' + (int)n) {
            const char *label = json_string_value(
                json_object_get(json_array_get(options, (size_t)(key - '1')), "label"));
            if (label != NULL)
                *reason = strdup(label);
            return AGT_DECISION_APPROVE;
        }
        if (key == 'r' || key == 'R') {
            char *fb = chat_read_line(ui, "what should change? ");
            if (fb != NULL && fb[0] != '\0') {
                *reason = fb;
            } else {
                free(fb);
                *reason = strdup("revise the plan");
            }
            return AGT_DECISION_REJECT;
        }
        if (key == 'n' || key == 'N')
            return AGT_DECISION_REJECT;
    }
}

/* Shows a request (agt_approval_json() shape; "agent_id" when a sub-agent
 * asks) and reads the user's answer: an AGT_DECISION_* value, *reason the
 * user's reason (malloc'd) or NULL. */
int chat_ask(const chat_ui *ui, const char *request_json, char **reason)
{
    json_t *j = json_loads(request_json, 0, NULL);
    const char *tool = json_string_value(json_object_get(j, "tool"));
    const char *why = json_string_value(json_object_get(j, "reason"));
    const char *rule = json_string_value(json_object_get(j, "suggested_rule"));
    const char *agent = json_string_value(json_object_get(j, "agent_id"));
    int decision = AGT_DECISION_REJECT;
    *reason = NULL;
    if (tool == NULL)
        tool = "?";
    fprintf(stderr, "\n%s? %s%s%s%s%s%s%s\n", ui->color ? "\033[33m" : "",
            agent != NULL ? "sub-agent " : "", agent != NULL ? agent : "",
            agent != NULL ? ": " : "", tool, why != NULL ? " wants approval: " : "",
            why != NULL ? why : "", ui->color ? "\033[0m" : "");
    if (strcmp(tool, "ExitPlanMode") == 0) {
        decision = ask_plan(ui, json_object_get(j, "arguments"), reason);
        json_decref(j);
        return decision;
    }
    show_call(ui, tool, json_object_get(j, "arguments"));
    /* a compound command's suggestion has one rule per line: shown as a list */
    char shown[1024] = "";
    for (size_t i = 0, w = 0; rule != NULL && rule[i] != '\0' && w + 3 < sizeof shown; i++) {
        if (rule[i] == '\n') {
            shown[w++] = ',';
            shown[w++] = ' ';
        } else {
            shown[w++] = rule[i];
        }
        shown[w] = '\0';
    }
    char prompt[1400];
    if (rule != NULL)
        snprintf(prompt, sizeof prompt,
                 "[y] yes once  [a] yes, and allow %s for this session%s  [n] no: ", shown,
                 ui->persist_rule != NULL ? "  [p] always, in this project" : "");
    else
        snprintf(prompt, sizeof prompt, "[y] yes  [n] no (a reason helps the model): ");
    for (;;) {
        char *rest = NULL;
        int key = chat_read_key_rest(ui, prompt, &rest);
        if (key < 0) {
            *reason = strdup("no answer (input closed)");
            break;
        }
        if (key == 3) {
            free(rest);
            *reason = strdup("interrupted by the user");
            break;
        }
        if (key == 'y' || key == 'Y') {
            decision = AGT_DECISION_APPROVE;
            *reason = rest;
        } else if ((key == 'a' || key == 'A') && rule != NULL) {
            decision = AGT_DECISION_APPROVE_SESSION;
            free(rest);
        } else if ((key == 'p' || key == 'P') && rule != NULL && ui->persist_rule != NULL) {
            /* for the session now, and in the project's settings for the next ones */
            decision = AGT_DECISION_APPROVE_SESSION;
            free(rest);
            ui->persist_rule(rule, ui->persist_payload);
        } else if (key == 'n' || key == 'N') {
            decision = AGT_DECISION_REJECT;
            if (rest == NULL) {
                char *r = chat_read_line(ui, "reason (optional, Enter to skip): ");
                if (r != NULL && r[0] != '\0')
                    *reason = r;
                else
                    free(r);
            } else {
                *reason = rest;
            }
        } else {
            free(rest);
            continue;
        }
        break;
    }
    json_decref(j);
    return decision;
}

int chat_approve(agt_approval *req, void *payload)
{
    char *reason = NULL;
    int decision = chat_ask(payload, agt_approval_json(req), &reason);
    if (reason != NULL)
        agt_approval_set_reason(req, reason);
    free(reason);
    return decision;
}
