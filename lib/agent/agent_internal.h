/*
 * Internals of the agent, shared by its files: agent.c (helpers, setup, the
 * loop), subagent.c (Agent and AgentSwarm), background.c (background tasks)
 * and agent_save.c (save and restore).
 */
#ifndef AGT_LIB_AGENT_INTERNAL_H
#define AGT_LIB_AGENT_INTERNAL_H

#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "agenttools/agent.h"
#include "dispatch/dispatch_internal.h"
#include "model/model_internal.h"
#include "session/events_internal.h"
#include "session/jobs.h"
#include "session/subapproval.h"

#define SUB_MAX_DEPTH 2
/* AgentSwarm: sub-agents per call, new and resumed together (the catalogue
 * and the seed reference: "up to 128 total subagents") */
#define SWARM_MAX_SUBS 128
#define SUB_PROMPT                                                                                 \
    "You are a sub-agent: another agent gave you the task below. Work on it with your tools, "     \
    "then end with a final answer that reports what you found or did; that answer is all the "     \
    "other agent sees."

/* A sub-agent profile (Agent's and AgentSwarm's subagent_type): the root
 * agent holds them, the built-in coder, explore and plan first. */
typedef struct agti_profile {
    char *name;
    char *description;
    json_t *tools; /* array of tool names, NULL: every tool of the session */
    char *prompt;  /* added to the sub-agent's system prompt, or NULL */
} agti_profile;

/* An Agent or AgentSwarm call suspended while its sub-agents wait for
 * approval: what is needed to finish it later. */
typedef struct susp {
    bool swarm;
    struct sub **subs;
    size_t n;
    char *desc; /* Agent: the description */
    char *note; /* why it ran in the foreground, or NULL */
    bool parallel;
} susp;

typedef struct call {
    char *id;
    char *name;
    char *args;
    bool answered; /* a result is known */
    char *text;
    bool is_error;
    susp *susp;     /* suspended on sub-agents' approvals */
    bool announced; /* its AGT_AGENT_APPROVAL event was given to the root's host */
    bool presented; /* waiting when a run or resume returned AGT_EPENDING */
} call;

struct agt_agent {
    agt_session *session;
    agt_model *model;
    json_t *messages;
    agt_agent_event_fn event_fn;
    void *event_payload;
    int max_turns;
    int64_t token_budget;
    int64_t window;
    int percent;
    int turns;
    int run_turns; /* model calls in the current run */
    int64_t tokens_used;
    int64_t last_count; /* prompt + completion tokens of the last call; -1 unknown */
    size_t bytes_at_count;
    int stop;
    atomic_int cancelled;
    call *calls; /* the tool calls of the turn being handled */
    size_t n_calls;
    bool waiting; /* paused on approvals */
    bool task_done;
    char *last_text;
    /* sub-agents (the Agent tool), owned by the root agent */
    struct sub **subs;
    size_t n_subs;
    struct bgtask **bgs; /* background sub-agents and swarms */
    size_t n_bgs;
    size_t n_swarms;
    agt_subagent_approver_fn approver;
    void *approver_payload;
    int swarm_max;          /* AgentSwarm workers */
    agti_profile *profiles; /* sub-agent profiles (the root's apply) */
    size_t n_profiles;
    char *tools_cache; /* the export of a frozen registry for tools_phase */
    int tools_phase;
    pthread_mutex_t subs_lock; /* subs against agt_agent_cancel() from other threads */
    struct sub *self;          /* the sub-agent this agent is, NULL for the root */
    int dispatching;           /* in a dispatch or answer of its own calls (can suspend one) */
    struct lost_task **lost;   /* restored background tasks that ran when saved */
    size_t n_lost;
    susp *new_susp;              /* set by the Agent/AgentSwarm provider that suspends its call */
    atomic_int parallel_max;     /* concurrent read-only calls of a turn (root's applies) */
    _Atomic int64_t subagent_ms; /* a sub-agent run's working-time limit, 0: none (root's) */
    _Atomic int64_t deadline;    /* CLOCK_MONOTONIC ms a sub-agent's run stops at, 0: none */
    bool timed_out;              /* the last run stopped at its deadline */
};

typedef struct sub {
    char id[32];
    agt_agent *root;
    int level;          /* 1: started by the root agent, 2: by a sub-agent */
    struct sub *parent; /* the sub-agent that started it, or NULL */
    atomic_bool busy;   /* running in a background task */
    struct bgtask *bg;  /* the background task running it, while busy */
    agt_session *session;
    agt_agent *agent;
    agt_model *own_model; /* a copy of the root's model for a swarm worker */
    char *item;           /* the AgentSwarm item it was started with */
    char *profile;        /* its subagent_type */
    json_t *tools;        /* the tools its profile allows, NULL: all */
    char *base_prompt;    /* its system prompt without the profile's addition */
    int rc;               /* the last run's status */
    int turns_before;
    bool on_host; /* runs on the host's thread: may ask the root session's approver */
    bool lost;    /* restored: it ran in the background when saved, its state is gone */
    /* the time limit of the current run (see sub_clock_start) */
    int64_t limit_ms;          /* the limit it started with, 0: none */
    int64_t left_ms;           /* working time left when it paused */
    bool clock_set;            /* limit_ms/left_ms belong to the current run */
    const struct sub *capped;  /* its parent, whose deadline came first; NULL: its own */
    _Atomic int64_t paused_ms; /* time spent in approvers during this stretch */
} sub;

/* A background sub-agent (Agent) or swarm (AgentSwarm): its thread, its
 * state for TaskList/TaskOutput/TaskStop and its notification. */
typedef struct bgtask {
    char id[32]; /* agent-N (the sub-agent's id) or swarm-N */
    char *description;
    agt_agent *root;
    bool swarm;
    sub **subs;
    size_t n;
    int workers;
    bool parallel;
    pthread_t th;
    bool joinable;
    int pipefd[2]; /* the read end becomes readable when it ends */
    pthread_mutex_t lock;
    pthread_cond_t cond;
    /* under lock */
    bool done, stopped, failed;
    bool timed_out;     /* an Agent task whose sub-agent stopped at its time limit */
    bool waiting;       /* sub-agents wait for the host's answers (the thread sleeps) */
    bool answering;     /* the host answers one of them now */
    bool wait_reported; /* the approval_needed event was handed out */
    json_t *wait_calls; /* the waiting calls, agt_session_pending() shape */
    char *stop_reason;
    agti_buf transcript;
    char *result;  /* the report, once done */
    char *preview; /* the start of the final answer, once done */
} bgtask;

/* The functions used across the agent's files (each file keeps the others
 * static); their comments are at their definitions. */

/* In agent.c: helpers and the loop. */
void agti_agent_susp_free(susp *sp);
int64_t agti_agent_mono_ms(void);
void agti_agent_calls_clear(agt_agent *a);
void agti_agent_emit_json(agt_agent *a, int kind, json_t *obj);
void agti_agent_finished_event(agt_agent *a, const call *c);
int agti_agent_set_result(call *c, const agt_result *res);
int agti_agent_append_results(agt_agent *a);
int agti_agent_offered_tools(agt_agent *a, const char **out);

/* In subagent.c: sub-agents. */
int agti_agent_profiles_init(agt_agent *a);
void agti_agent_profiles_free(agt_agent *a);
const agti_profile *agti_agent_profile_find(agt_agent *root, const char *name);
bool agti_agent_sub_allows(const sub *sb, const char *tool);
char *agti_agent_profile_list(agt_agent *root);
void agti_agent_sub_free(sub *sb);
sub *agti_agent_sub_find(agt_agent *root, const char *id);
bool agti_agent_in_background(const sub *sb);
int agti_agent_sub_run(sub *sb, bool host);
int agti_agent_sub_resume(sub *sb, bool host);
bool agti_agent_in_tree(agt_agent *a, const sub *sb);
struct sub *agti_agent_waiting_sub(agt_agent *a, const char *id);
int agti_agent_answer_in_sub(struct sub *sb, const char *call_id, int decision, const char *reason);
char *agti_agent_first_unanswered(agt_agent *a);
int agti_agent_collect_waiting(agt_agent *a, json_t *list, bool event);
void agti_agent_announce(agt_agent *a);
int agti_agent_ask_bg_event(agt_agent *a, json_t *ev);
bool agti_agent_sub_timed_out(const sub *sb, int rc);
char *agti_agent_report(sub *sb, int rc, const char *desc, int turns_before, const char *note,
                        bool *failed);
void agti_agent_swarm_run(sub **subs, size_t n, int workers, bgtask *bg);
char *agti_agent_swarm_report(sub **subs, size_t n, bool parallel);
int agti_agent_continue_suspended(agt_agent *a);
void agti_agent_abandon(agt_agent *a, const char *reason);

/* In background.c: background tasks. */
void agti_agent_bg_note(bgtask *t, const char *fmt, ...) AGTI_PRINTF(2, 3);
sub *agti_agent_bg_waiting_sub(agt_agent *root, const char *id, bgtask **out);
int agti_agent_bg_answer(bgtask *t, sub *sb, const char *call_id, int decision, const char *reason);
bgtask *agti_agent_bg_find(agt_agent *root, const char *id);
void agti_agent_bg_free_all(agt_agent *root);
int agti_agent_bg_start(agt_agent *root, const char *id, const char *desc, bool is_swarm,
                        sub **subs, size_t n, bool parallel);

/* In agent_save.c: save and restore. */
void agti_agent_lost_free_all(agt_agent *root);

#endif
