/* agt-chat internals shared by its source files. */
#ifndef CHAT_H
#define CHAT_H

#include <agenttools/agenttools.h>
#include <stdio.h>

typedef struct chat_ui {
    int interactive; /* a terminal: line editing, prompts */
    int color;       /* ANSI colours on stderr */
    int yolo;
    const char *root; /* resolved workspace root */
} chat_ui;

/* Prints a unified diff (3 context lines) of old_text -> new_text;
   old_text NULL means a new file. */
int chat_print_diff(FILE *f, const char *path, const char *old_text, const char *new_text,
                    int color);

/* The synchronous approver: shows the call and asks the user. */
int chat_approve(agt_approval *req, void *payload);

/* Shows a request (agt_approval_json() shape, with "agent_id" when a
 * sub-agent asks) and asks the user: an AGT_DECISION_* value; *reason gets
 * the user's reason (malloc'd) or NULL. */
int chat_ask(const chat_ui *ui, const char *request_json, char **reason);

/* Reads one line from the user (libedit when interactive); NULL at EOF. */
char *chat_read_line(const chat_ui *ui, const char *prompt);

#endif
