/*
 * The example CLIs' use of the library's agent loop (agent.h): model setup
 * from the configuration, event handling (streamed text, tool progress,
 * token counts, the turn's reasoning for review comments), time limits and
 * cancellation.
 */
#ifndef CLI_AGENT_H
#define CLI_AGENT_H

#include "cli_config.h"

#include <agenttools/agenttools.h>
#include <jansson.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>

/* Creates the model the configuration names (HTTP or replay). */
int cli_model_open(const cli_config *cfg, agt_model **out, char *err, size_t errlen);

typedef struct cli_agent {
    agt_agent *agent;
    agt_model *model;
    agt_session *session;
    int64_t deadline_ms;           /* cli_now_ms() limit; 0 = none */
    volatile sig_atomic_t *cancel; /* set non-zero to cancel the running turn */
    /* Host callbacks (any may be NULL); payload is passed to each. */
    void (*on_text)(const char *text, size_t len, void *payload);
    void (*on_thinking)(const char *text, size_t len, void *payload);
    /* A tool call starts (id as the model named it, arguments JSON text). */
    void (*on_tool_started)(const char *id, const char *name, const char *args, void *payload);
    /* A tool call ended; args are those of its own started event (by id). */
    void (*on_tool)(const char *id, const char *name, const char *args, int is_error,
                    const char *preview, void *payload);
    void (*on_notification)(const char *event_json, void *payload);
    void *payload;
    int set_thinking; /* hand each turn's reasoning to the session (review comments) */
    int64_t prompt_tokens, completion_tokens;
    /* private */
    char *thinking;
    size_t thinking_len;
    json_t *started; /* {id: started event} of the calls still running */
} cli_agent;

enum {
    CLI_RUN_DONE = 0,      /* the model stopped calling tools, or called task_done */
    CLI_RUN_TURNS = 1,     /* the turn budget was used up */
    CLI_RUN_CANCELLED = 2, /* the cancel flag */
    CLI_RUN_TIMEOUT = 3,   /* the deadline passed */
    CLI_RUN_ERROR = 4      /* a model request failed; err says why */
};

/* Creates the agent loop over a session and a model; -1 with err on failure. */
int cli_agent_init(cli_agent *a, agt_model *m, agt_session *s, int max_turns, char *err,
                   size_t errlen);
void cli_agent_fini(cli_agent *a);
int cli_agent_set_system(cli_agent *a, const char *text);
int cli_agent_add_user(cli_agent *a, const char *text);
/* A session event (agt_session_tick() object) as the model's notification. */
int cli_agent_add_notification(cli_agent *a, const char *message);
/* Runs the loop until it stops; returns a CLI_RUN_* value. */
int cli_agent_run(cli_agent *a, char *err, size_t errlen);
/* The text of the last assistant message (borrowed). */
const char *cli_agent_text(const cli_agent *a);
int cli_agent_turns(const cli_agent *a);

#endif
