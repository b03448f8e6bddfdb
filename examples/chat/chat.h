/* agt-chat internals shared by its source files. */
#ifndef CHAT_H
#define CHAT_H

#include <agenttools/agenttools.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>

typedef struct chat_ui {
    int interactive; /* a terminal: line editing, prompts */
    int color;       /* ANSI colours on stderr */
    int yolo;
    const char *root;              /* resolved workspace root */
    agt_session *session;          /* the plan file for ExitPlanMode */
    volatile sig_atomic_t *cancel; /* set by Ctrl-C at an approval prompt */
    /* Renders markdown text to f (NULL: printed as it is). */
    void (*render)(FILE *f, const char *markdown, void *payload);
    void *render_payload;
    /* Stores an allow rule for good (the project's settings); NULL: no [p]. */
    void (*persist_rule)(const char *rule, void *payload);
    void *persist_payload;
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

/* Reads one answer key: on a terminal a single key press without Enter
 * (3 for Ctrl-C, which also sets *ui->cancel), else the first character of
 * a line, the rest of the line (trimmed, malloc'd, NULL when empty) in *rest
 * when rest is not NULL; -1 at end of input. */
int chat_read_key_rest(const chat_ui *ui, const char *prompt, char **rest);
int chat_read_key(const chat_ui *ui, const char *prompt);

/* Reads one line from the user (libedit when interactive); NULL at EOF. */
char *chat_read_line(const chat_ui *ui, const char *prompt);

/* Rules that outlive a session (rules.c). */
/* <root>/.agenttools/settings.json into buf; -1 when it does not fit. */
int chat_settings_path(const char *root, char *buf, size_t len);
/* Loads {"allow","ask","deny"} JSON text (NULL: nothing); what names the source. */
int chat_rules_load(agt_session *s, const char *json_text, const char *what, char *err,
                    size_t errlen);
/* The project's settings file's "permissions"; *loaded 1 when it had some. */
int chat_rules_load_project(agt_session *s, const char *root, int *loaded, char *err,
                            size_t errlen);
/* Adds an allow rule (one per line) to the project's settings file. */
int chat_rules_persist(const char *root, const char *rule, char *err, size_t errlen);
/* /permissions: the session's rules and where the stored ones come from. */
void chat_rules_print(FILE *f, agt_session *s, const char *user_path, const char *project_path);

/* The environment block and the project's instructions for the system
 * prompt (context.c), malloc'd; *sources (malloc'd, NULL when none) names
 * the instruction files read, comma-separated. */
char *chat_context(const char *root, char **sources);

/* Markdown on a terminal (markdown.c): the rendered text, malloc'd (NULL
 * when md4c failed); color 0 gives the layout without escape sequences. */
char *chat_md_render(const char *md, size_t len, int color);

/* Streamed answers rendered a block at a time: text is kept until a blank
 * line outside a code fence ends a block, then rendered to f. */
typedef struct chat_md_stream {
    char *buf;
    size_t len;
    int color;
    int blocks; /* pieces written since the last flush */
} chat_md_stream;
void chat_md_stream_feed(chat_md_stream *m, const char *text, size_t len, FILE *f);
/* The rest, at the end of a message; 1 when something was written. */
int chat_md_stream_flush(chat_md_stream *m, FILE *f);
void chat_md_stream_free(chat_md_stream *m);

/* Checkpoints of the files the turns' Write/Edit/MultiEdit calls wrote
 * (checkpoint.c), for /undo and /diff. */
typedef struct chat_cp_entry {
    char *path;    /* absolute */
    int existed;   /* 0: the turn created it */
    char *content; /* before the turn's first write */
    size_t len;
    unsigned mode;
} chat_cp_entry;
typedef struct chat_cp_turn {
    chat_cp_entry *files;
    size_t n;
} chat_cp_turn;
typedef struct chat_cp {
    chat_cp_turn *turns; /* the turns that wrote files, oldest first */
    size_t n;
} chat_cp;
int chat_cp_begin_turn(chat_cp *cp);
void chat_cp_end_turn(chat_cp *cp);
/* Keeps the file's content before the current turn first writes it. */
int chat_cp_note(chat_cp *cp, const char *root, const char *path);
/* Puts the last turn's files back; the note for the model (malloc'd), or
 * NULL when there was nothing to undo. */
char *chat_cp_undo(chat_cp *cp, const char *root, FILE *f);
/* The session's changes to the files it wrote, as unified diffs. */
void chat_cp_diff(const chat_cp *cp, const char *root, FILE *f, int color);
void chat_cp_free(chat_cp *cp);

/* Output of print mode (output.c). */
enum { CHAT_OUT_TEXT = 0, CHAT_OUT_JSON = 1, CHAT_OUT_STREAM = 2 };

typedef struct chat_out {
    int format;             /* CHAT_OUT_* */
    struct json_t *calls;   /* the tool calls of the run, for the result */
    unsigned char carry[4]; /* a text piece's cut UTF-8 sequence */
    size_t ncarry;
} chat_out;

/* "text", "json", "stream-json" -> CHAT_OUT_*; -1 for anything else. */
int chat_out_parse(const char *name);
void chat_out_init(chat_out *o, int format);
void chat_out_fini(chat_out *o);
/* A JSON string of len bytes with invalid UTF-8 replaced (U+FFFD); with
 * carry, a sequence cut at the end is kept there for the next piece. */
struct json_t *chat_out_string(const char *data, size_t len, unsigned char carry[4],
                               size_t *ncarry);
/* Writes obj (stolen) as one line of JSON on stdout. */
void chat_out_line(struct json_t *obj);
/* A finished tool call: kept for the result (stream-json: a line now). */
void chat_out_call(chat_out *o, const char *id, const char *name, const char *args, int is_error,
                   const char *preview);
/* The final {"type":"result",...} line; error NULL when the turn succeeded. */
int chat_out_result(chat_out *o, const char *text, const char *stop, const char *error, int turns,
                    int64_t prompt_tokens, int64_t completion_tokens);

#endif
