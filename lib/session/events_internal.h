/* Background tasks, the cron table and the event queue of a session
 * (events.c, crontab.c), for the shell and cron tool providers. */
#ifndef AGT_LIB_SESSION_EVENTS_INTERNAL_H
#define AGT_LIB_SESSION_EVENTS_INTERNAL_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "agenttools/cron.h"
#include "agenttools/session.h"
#include "proc/proc.h"

/* Defaults a host can change through the session. */
#define AGTI_CRON_MAX_JOBS 50
#define AGTI_CRON_MAX_PROMPT 8192                  /* bytes of UTF-8 */
#define AGTI_CRON_STALE_AFTER_S (7 * 24 * 3600)    /* recurring jobs live 7 days */
#define AGTI_CRON_RECURRING_JITTER_MAX_S (15 * 60) /* and at most 10% of the period */
#define AGTI_CRON_ONESHOT_JITTER_MAX_S 90

typedef struct agti_cron_job {
    char id[9]; /* 8 lowercase hex digits */
    agt_cron *cron;
    char *prompt;
    bool recurring;
    int64_t created_s;   /* unix seconds */
    int64_t last_fire_s; /* -1 when it never fired */
    int64_t next_s;      /* next scheduled fire (before jitter), unix seconds */
    bool paused;         /* set by the host: never fires until resumed */
} agti_cron_job;

typedef struct agti_crontab {
    agti_cron_job *jobs;
    size_t n, cap;
} agti_crontab;

/* A background task that is not a process of the task manager (a
 * background sub-agent or swarm, lib/agent). Its owner runs it on its own
 * thread; the session only asks through these callbacks, on the session's
 * thread, and turns its end into a "task_finished" event (with "kind"). */
typedef struct agti_ext_snapshot {
    /* static: "running", "waiting for approval" (both active: see
     * agti_ext_status_active), "completed", "failed" or "killed" */
    const char *status;
    char *output;  /* malloc'ed: transcript / report so far (may be NULL) */
    char *message; /* malloc'ed once ended: the notification for the model */
    char *preview; /* malloc'ed once ended: the start of the final answer */
} agti_ext_snapshot;

typedef struct agti_ext_task_ops {
    /* fills *out (AGT_OK) or fails with AGT_ENOMEM */
    int (*snapshot)(void *payload, agti_ext_snapshot *out);
    /* stops it and waits for its end: AGT_OK, AGT_ESTATE (had ended), AGT_ETIMEOUT */
    int (*stop)(void *payload, const char *reason);
    /* waits up to ms for its end: AGT_OK (ended) or AGT_ETIMEOUT */
    int (*wait)(void *payload, int64_t ms);
    /* a descriptor that becomes readable when it ends (or needs the host), or -1 */
    int (*poll_fd)(void *payload);
    /* an event to hand out with agt_session_tick() now (e.g. approval_needed),
     * once; NULL when none. May be NULL. */
    json_t *(*take_event)(void *payload);
} agti_ext_task_ops;

typedef struct agti_ext_task {
    char *id;
    char *kind; /* "agent", "swarm" */
    char *description;
    const agti_ext_task_ops *ops;
    void *payload; /* the owner's; never freed by the session */
    bool reported; /* its end was turned into an event */
} agti_ext_task;

void agti_ext_snapshot_free(agti_ext_snapshot *snap);
/* Whether an external task's status means it has not ended. */
bool agti_ext_status_active(const char *status);

struct agti_session_bg {
    agti_tasks *tasks; /* created on first use */
    char *log_dir;     /* host setting, or the default once created */
    size_t max_running;
    bool background_on_timeout;
    agt_tool_output_fn output_fn; /* live output of foreground Bash; NULL: none */
    void *output_payload;
    agt_clock_fn clock;
    void *clock_payload;
    bool idle;
    json_t *events;   /* queued events, handed out by agt_session_tick */
    json_t *quiet;    /* object: ids of foreground runs whose end is not an event */
    json_t *restored; /* array: tasks of a restored session (running ones are "lost") */
    agti_crontab cron;
    agti_ext_task *ext; /* external tasks, oldest first */
    size_t n_ext;
};

/* The session's background state, created on first use; NULL on OOM (the
 * last error is set). */
struct agti_session_bg *agti_session_bg(agt_session *s);
/* The task manager, created on first use with the session's log directory. */
int agti_session_tasks(agt_session *s, agti_tasks **out);
/* The session's log directory (created, mode 0700), borrowed. */
int agti_session_log_dir(agt_session *s, const char **out);
/* Wall-clock "now" in ms from the session clock. */
int64_t agti_session_now_ms(agt_session *s);
/* Moves finished-task events from the manager into the queue. */
int agti_session_collect_task_events(agt_session *s);

/* Registers an external task (or re-arms the one with the same id: new
 * description, ops and payload, its end not reported yet). Strings are
 * copied; AGT_OK or AGT_ENOMEM. Call on the session's thread. */
int agti_session_ext_add(agt_session *s, const char *id, const char *kind, const char *description,
                         const agti_ext_task_ops *ops, void *payload);
/* Forgets an external task (its owner goes away); unknown ids are ignored. */
void agti_session_ext_remove(agt_session *s, const char *id);
/* The external task with that id (borrowed), or NULL. */
agti_ext_task *agti_session_ext_find(agt_session *s, const char *id);

/* A restored task record by id (borrowed), or NULL. */
json_t *agti_session_restored_task(const agt_session *s, const char *id);

/* Save/restore sections (lib/session/save.c): "tasks" and "cron". */
int agti_tasks_section_save(const agt_session *s, json_t **value);
int agti_tasks_section_load(agt_session *s, json_t *value, void **tmp);
void agti_tasks_section_commit(agt_session *s, void *tmp);
void agti_tasks_section_discard(void *tmp);
int agti_cron_section_save(const agt_session *s, json_t **value);
int agti_cron_section_load(agt_session *s, json_t *value, void **tmp);
void agti_cron_section_commit(agt_session *s, void *tmp);
void agti_cron_section_discard(void *tmp);

/* ---- cron table (crontab.c) ---- */

/* Adds a job. now_s: creation time. AGT_ELIMIT (50 jobs), AGT_EPARSE (bad or
 * never-firing expression), AGT_EINVAL (prompt too long or empty), AGT_ENOMEM.
 * *out is borrowed from the table. */
int agti_crontab_add(agti_crontab *t, const char *expr, const char *prompt, bool recurring,
                     int64_t now_s, const agti_cron_job **out);
/* AGT_OK or AGT_ENOTFOUND. */
int agti_crontab_remove(agti_crontab *t, const char *id);
const agti_cron_job *agti_crontab_find(const agti_crontab *t, const char *id);
void agti_crontab_clear(agti_crontab *t);
/* The jitter of a fire (seconds; positive = later): recurring jobs move later
 * by up to min(10% of period_s, 15 min); one-shot jobs whose fire falls on
 * :00 or :30 move earlier by up to 90 s. Deterministic in id. */
int64_t agti_cron_jitter_s(const char *id, bool recurring, int64_t fire_s, int64_t period_s);
/* When job j really fires for its scheduled time sched_s (jitter applied). */
int64_t agti_cron_job_fire_time(const agti_cron_job *j, int64_t sched_s);
/* Due fires at now_s appended to events (when deliver); jobs fired are
 * advanced or deleted. */
int agti_crontab_collect(agti_crontab *t, int64_t now_s, json_t *events);
/* Earliest jittered fire time (unix s) of any job, -1 when none. */
int64_t agti_crontab_next_fire(const agti_crontab *t);
/* ISO 8601 local time with UTC offset, "2026-11-30T09:00:00+01:00". */
void agti_cron_format_time(int64_t unix_s, char buf[40]);

#endif
