/*
 * A small agent loop for the example CLIs, on the public headers: model turn
 * -> tool calls dispatched through the session -> results -> next turn.
 */
#ifndef CLI_AGENT_H
#define CLI_AGENT_H

#include "cli_config.h"

#include <agenttools/agenttools.h>
#include <jansson.h>
#include <signal.h>
#include <stdint.h>

/* Creates the model the configuration names (HTTP or replay). */
int cli_model_open(const cli_config *cfg, agt_model **out, char *err, size_t errlen);

typedef struct cli_agent {
    agt_model *model;
    agt_session *session;
    json_t *messages;              /* the conversation (canonical OpenAI shape), owned */
    int max_turns;                 /* model turns per cli_agent_run(); 0 = 50 */
    int64_t deadline_ms;           /* cli_now_ms() limit; 0 = none */
    volatile sig_atomic_t *cancel; /* set non-zero to cancel the running turn */
    /* Stops the loop after a tool call when it returns non-zero. */
    int (*should_stop)(void *payload);
    /* Told about every tool call and its result (progress output). */
    void (*on_tool)(const char *name, const char *args, agt_result *r, void *payload);
    /* Told about each assistant message (after streaming, if any). */
    void (*on_reply)(const char *text, void *payload);
    void *payload;
    int set_thinking; /* pass each turn's reasoning to the session (review) */
    int64_t prompt_tokens, completion_tokens;
    int turns; /* model turns so far */
    int64_t started_ms;
} cli_agent;

enum {
    CLI_RUN_DONE = 0,      /* the model stopped calling tools, or should_stop said so */
    CLI_RUN_TURNS = 1,     /* max_turns reached */
    CLI_RUN_CANCELLED = 2, /* cancel flag */
    CLI_RUN_TIMEOUT = 3,   /* deadline passed */
    CLI_RUN_ERROR = 4      /* model request failed; err says why */
};

void cli_agent_init(cli_agent *a, agt_model *m, agt_session *s);
void cli_agent_fini(cli_agent *a);
void cli_agent_add(cli_agent *a, const char *role, const char *content);
/* Runs turns until done; tools_json is the OpenAI export of the offered tools. */
int cli_agent_run(cli_agent *a, const char *tools_json, char *err, size_t errlen);
/* Installs the model's cancel poll (deadline and cancel flag). */
void cli_agent_arm(cli_agent *a);

#endif
