/*
 * agt-chat: approval prompts. Shows what the call will do (the command; for
 * Write and Edit a coloured unified diff of the file) and asks: approve once,
 * approve for the session (storing the suggested rule), or reject with a
 * reason the model is told.
 */
#include "chat.h"

#include "cli_util.h"

#include <editline/readline.h>
#include <jansson.h>
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
    } else {
        char *s = json_dumps(args, JSON_INDENT(2));
        if (s != NULL)
            fprintf(stderr, "%s\n", s);
        free(s);
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
    show_call(ui, tool, json_object_get(j, "arguments"));
    char prompt[512];
    if (rule != NULL)
        snprintf(prompt, sizeof prompt,
                 "[y] yes once  [a] yes, and allow %s for this session  [n] no: ", rule);
    else
        snprintf(prompt, sizeof prompt, "[y] yes  [n] no (a reason helps the model): ");
    for (;;) {
        char *ans = chat_read_line(ui, prompt);
        if (ans == NULL) {
            *reason = strdup("no answer (input closed)");
            break;
        }
        char c = ans[0];
        const char *rest = ans[0] != '\0' ? ans + 1 : ans;
        while (*rest == ' ' || *rest == ':')
            rest++;
        if (c == 'y' || c == 'Y') {
            decision = AGT_DECISION_APPROVE;
            if (rest[0] != '\0')
                *reason = strdup(rest);
        } else if ((c == 'a' || c == 'A') && rule != NULL) {
            decision = AGT_DECISION_APPROVE_SESSION;
        } else if (c == 'n' || c == 'N') {
            decision = AGT_DECISION_REJECT;
            if (rest[0] == '\0') {
                char *r = chat_read_line(ui, "reason (optional): ");
                if (r != NULL && r[0] != '\0')
                    *reason = r;
                else
                    free(r);
            } else {
                *reason = strdup(rest);
            }
        } else {
            free(ans);
            continue;
        }
        free(ans);
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
